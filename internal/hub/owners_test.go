package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// TestNPCHealthInWords plays a whole fight at a table in words mode and
// scans every frame a player and a spectator receive, the snapshots and
// the event log a late reader gets: no NPC hit points appear, as a field
// or in the narration, and the NPCs' health is given in words. The
// operator's view keeps the numbers.
func TestNPCHealthInWords(t *testing.T) {
	e := newEnv(t, 7)
	timeout := 0
	tid := e.table(hub.TableSpec{NPCHP: engine.NPCHPWords, TurnTimeoutS: &timeout})
	p, tok := e.player("Ann")
	c := e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	s := e.dial(tid, "spectator", "", -1)
	// The stream (SSE) and a subscriber get the same events as the sockets.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := e.hub.Stream(ctx, tid, 0)
	if err != nil {
		t.Fatal(err)
	}
	var streamed []engine.Event
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		for ev := range sub.Events {
			streamed = append(streamed, ev)
			if ev.Kind == engine.EventCombatEnded {
				return
			}
		}
	}()
	a.startFight()
	mine := "pc:" + c.Seat
	ended := false
	for i := 0; i < 40 && !ended; i++ {
		f := a.until("my turn or the end", func(f frame) bool {
			return f.Type == "event" && (f.Kind == "combat_ended" || f.Kind == "turn" && entryOf(f) == mine)
		})
		if f.Kind == "combat_ended" {
			ended = true
			break
		}
		a.act(fmt.Sprintf("hit%d", i), "I attack Snikket")
	}
	if !ended {
		t.Fatal("the fight did not end")
	}
	s.event("combat_ended")
	<-streamDone
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := e.hub.AdminView(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	npcs := map[string]bool{}
	for _, n := range admin.World.NPCs {
		npcs[n.Name] = true
	}
	evs, err := e.hub.Events(context.Background(), tid, 0, hub.MaxEventsPage)
	if err != nil {
		t.Fatal(err)
	}
	snapJSON, _ := json.Marshal(snap)
	evsJSON, _ := json.Marshal(evs)
	var frames []json.RawMessage
	for _, cl := range []*wsClient{a, s} {
		for _, f := range append(cl.backlog, cl.events...) {
			frames = append(frames, f.Raw)
		}
	}
	streamJSON, _ := json.Marshal(streamed)
	frames = append(frames, snapJSON, evsJSON, streamJSON)
	words, damages := 0, 0
	number := regexp.MustCompile(`\d+\s*/\s*\d+|\d+ HP`)
	for _, raw := range frames {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		walk(v, func(m map[string]any) {
			name, _ := m["name"].(string)
			if target, ok := m["target"].(string); ok {
				name = target
			}
			if !npcs[name] {
				if text, ok := m["text"].(string); ok {
					for n := range npcs {
						for _, hit := range regexp.MustCompile(regexp.QuoteMeta(n)+`[^.;]{0,12}`).FindAllString(text, -1) {
							if number.MatchString(hit) {
								t.Errorf("narration gives %s's numbers: %q", n, hit)
							}
						}
					}
				}
				return
			}
			if _, ok := m["hp"]; ok {
				t.Errorf("NPC %s has hp in %s", name, raw)
			}
			if _, ok := m["max_hp"]; ok {
				t.Errorf("NPC %s has max_hp in %s", name, raw)
			}
			if h, ok := m["health"].(string); ok {
				words++
				if !strings.Contains("unhurt wounded bloodied near death down", h) {
					t.Errorf("health %q", h)
				}
				if _, ok := m["amount"]; ok {
					damages++
				}
			}
		})
	}
	if words == 0 || damages == 0 {
		t.Errorf("%d health words, %d of them in damage or heal events: the fight showed none", words, damages)
	}
	// The operator still sees the numbers.
	for _, n := range admin.World.NPCs {
		if n.MaxHP == 0 {
			t.Errorf("operator's view of %s has no numbers", n.Name)
		}
	}
}

// walk calls f on every JSON object in v.
func walk(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, y := range x {
			walk(y, f)
		}
	case []any:
		for _, y := range x {
			walk(y, f)
		}
	}
}

// TestWordsSwitchedOnMidGame: PATCH turns words on at a running table;
// from then on, the snapshot hides the numbers.
func TestWordsSwitchedOnMidGame(t *testing.T) {
	e := newEnv(t, 7)
	tid := e.table(hub.TableSpec{})
	owner, _ := e.player("Owner")
	p, tok := e.player("Ann")
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	a.startFight()
	snap, _ := e.hub.Snapshot(context.Background(), tid)
	if snap.Combat == nil || snap.Combat.Initiative[2].HP == nil {
		t.Fatalf("exact mode shows no numbers: %+v", snap.Combat)
	}
	words := engine.NPCHPWords
	if _, err := e.hub.Patch(context.Background(), tid, engine.Player{ID: p.ID}, engine.SettingsPatch{NPCHP: &words}); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Fatalf("a player's PATCH: %v", err)
	}
	sum, err := e.hub.Patch(context.Background(), tid, *owner, engine.SettingsPatch{NPCHP: &words})
	if err != nil || sum.NPCHP != engine.NPCHPWords {
		t.Fatalf("PATCH: %+v %v", sum, err)
	}
	snap, _ = e.hub.Snapshot(context.Background(), tid)
	for _, en := range snap.Combat.Initiative {
		if en.Kind == engine.KindNPC && (en.HP != nil || en.Health == "") {
			t.Errorf("NPC entry after PATCH: %+v", en)
		}
	}
	for _, n := range snap.NPCs {
		if n.HP != nil {
			t.Errorf("NPC after PATCH: %+v", n)
		}
	}
}
