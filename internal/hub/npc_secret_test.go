package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	llmtest "tavern/internal/openai/openaitest"
)

// An NPC the DM creates keeps its secret from the table: no frame a player
// or a spectator receives, no snapshot and no stored event (which the
// story export and the event stream read) carries it, while the NPC
// itself is there for all to see and fights the party.
func TestCreatedNPCsSecretStaysWithTheDM(t *testing.T) {
	const secret = "She is Maren's runaway daughter."
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 5, fake)
	tid, a, s := seatedTable(e, fake)

	fake.Push(
		llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("create_npc", map[string]any{
			"name": "Vesna", "kind": "bandit", "hostile": true, "faction": "Red Hands", "personality": "cold, precise",
			"tactics": "shoots from cover, flees when alone", "secret": secret, "level": 2, "weapon": "shortbow", "armour": "leather"})}},
		respond("A woman with a bow watches from the well."),
	)
	a.act("a1", "I look around")
	a.until("narration", func(f frame) bool { return f.Type == "event" && f.Kind == "narration" })
	if !strings.Contains(e.stateJSON(tid), secret) {
		t.Fatal("the secret was not stored with the NPC: the test would prove nothing")
	}
	late := e.dial(tid, "spectator", "", -1)
	snap := late.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	if !strings.Contains(string(snap.Raw), "Vesna") || strings.Contains(string(snap.Raw), "runaway daughter") {
		t.Errorf("the snapshot should show the created NPC and not her secret: %s", snap.Raw)
	}

	fake.Push(llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("start_combat", map[string]any{
		"narration": "Vesna looses an arrow!", "foes": []string{"Vesna"}})}})
	fake.SetFallback(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("end_combat", map[string]any{
			"narration": "Vesna vanishes into the alleys.", "outcome": engine.OutcomeNPCFlee})}}
	})
	a.act("a2", "I draw my sword on her")
	for _, c := range []*wsClient{a, s, late} {
		c.until("mode narrative", func(f frame) bool {
			return f.Type == "event" && f.Kind == "mode" && dataOf(f)["mode"] == engine.ModeNarrative
		})
	}
	started := a.event("combat_started")
	if !strings.Contains(string(started.Raw), "Vesna") {
		t.Errorf("Vesna is not in the fight: %s", started.Raw)
	}
	for _, c := range []*wsClient{a, s, late} {
		for _, f := range append(c.backlog, c.events...) {
			if strings.Contains(string(f.Raw), "runaway daughter") {
				t.Errorf("%s received the secret: %s", c.name, f.Raw)
			}
		}
	}
	ctx := context.Background()
	got, err := e.hub.Snapshot(ctx, tid)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := e.hub.Events(ctx, tid, 0, hub.MaxEventsPage)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]any{"snapshot": got, "events": evs} {
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), "runaway daughter") {
			t.Errorf("the %s carry the secret: %s", what, b)
		}
	}
	if b, _ := json.Marshal(evs); !strings.Contains(string(b), "Vesna") {
		t.Error("no event names Vesna: the check above would prove nothing")
	}
}
