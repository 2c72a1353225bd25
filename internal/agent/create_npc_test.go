package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
	"tavern/internal/openai/openaitest"
)

// vesna is a full NPC profile as the DM writes it, within the budget of a
// lone level-1 hero (level 2 at most).
var vesna = map[string]any{
	"name": "Vesna", "kind": "bandit", "hostile": true, "disposition": -40, "faction": "Red Hands",
	"personality": "cold, precise", "tactics": "shoots from cover, flees when alone", "secret": "She is Maren's runaway daughter.",
	"level": 2, "hp": 24, "stats": map[string]any{"str": 12, "agi": 16}, "weapon": "shortbow", "armour": "leather",
}

// loneHero is a table of the default adventure with Aldric alone: a party
// of power 1.
func loneHero(t *testing.T) (*engine.State, *engine.Dice, *engine.Character) {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 7)
	d := engine.NewDice(7)
	actor, err := st.AddCharacter(d, "c1", "1", "p", engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"})
	if err != nil {
		t.Fatal(err)
	}
	return st, d, actor
}

// toolResults maps each tool call's name to its result, in a turn's
// messages.
func toolResults(msgs []agent.Message) map[string]string {
	names, out := map[string]string{}, map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Function.Name
		}
		if m.Role == "tool" {
			out[names[m.ToolCallID]] = m.Content
		}
	}
	return out
}

// createAndFight plays a narrative turn in which the fake DM creates
// Vesna from profile, reads her back and starts a fight with her, and returns her
// initiative entry.
func createAndFight(t *testing.T, fake *openaitest.Server, r *agent.Runner, st *engine.State, d *engine.Dice, actor *engine.Character, profile map[string]any) engine.Combatant {
	t.Helper()
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("create_npc", profile)}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("get_npc_info", map[string]any{"npc": "Vesna"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("start_combat", map[string]any{"narration": "An arrow hisses past.", "foes": []string{"Vesna"}})}},
	)
	res, err := r.Run(agent.WithTable(context.Background(), "t1"), &agent.Turn{No: 1, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Text: "I look for the archer"})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolResults(res.Messages)["create_npc"]; !strings.Contains(got, `"name":"Vesna"`) || !strings.Contains(got, `"level":2`) {
		t.Fatalf("create_npc answered %s", got)
	}
	// The DM reads back the profile it plays her from.
	tactics, _ := json.Marshal(profile["tactics"])
	if got := toolResults(res.Messages)["get_npc_info"]; !strings.Contains(got, `"tactics":`+string(tactics)) || !strings.Contains(got, `"faction":"Red Hands"`) {
		t.Errorf("get_npc_info answered %s", got)
	}
	if res.Output.Tool != "start_combat" || st.Game.Combat == nil {
		t.Fatalf("no fight: %+v", res.Output)
	}
	for _, e := range st.Game.Combat.Order {
		if e.Kind == engine.KindNPC && e.Name == "Vesna" {
			return e
		}
	}
	t.Fatalf("Vesna is not in the fight: %+v", st.Game.Combat.Order)
	return engine.Combatant{}
}

func TestCreatedNPCIsPlayedFromItsProfile(t *testing.T) {
	st, d, actor := loneHero(t)
	fake := openaitest.New(t, nil)
	m := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: m, Combat: m}
	entry := createAndFight(t, fake, r, st, d, actor, vesna)

	fake.Push(openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("continue_combat", map[string]any{"narration": "Vesna slips behind a cart."})}})
	if _, err := r.Run(context.Background(), &agent.Turn{No: 2, Kind: agent.TurnNPC, State: st, Dice: d, Entry: entry}); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	if !slices.Contains(last.ToolNames(), "continue_combat") {
		t.Fatalf("the NPC turn went to the narrative agent: %v", last.ToolNames())
	}
	msg := last.Messages[len(last.Messages)-1].Content
	ctx, _, err := agent.ReadTurnMessage(msg)
	if err != nil || ctx.NPC == nil {
		t.Fatalf("no NPC profile in the combat prompt: %v\n%s", err, msg)
	}
	p := ctx.NPC
	if p.Name != "Vesna" || p.Tactics != vesna["tactics"] || p.Personality != vesna["personality"] || p.Secret != vesna["secret"] ||
		p.Weapon != "Shortbow" || p.Armour != "Leather armour" {
		t.Errorf("profile in the combat prompt %+v", p)
	}
	// The fight fits her to the party like the adventure's foes: a party
	// of power 1 meets her at (1+1)/(3+1) of her HP.
	if p.MaxHP != 12 {
		t.Errorf("max HP %d in the fight, want 24 scaled to 12", p.MaxHP)
	}
}

func TestCreateNPCRefusesAnNPCAboveTheBudget(t *testing.T) {
	st, d, actor := loneHero(t)
	fake := openaitest.New(t, nil)
	m := newFakeModel(t, fake)
	strong := map[string]any{}
	for k, v := range vesna {
		strong[k] = v
	}
	strong["level"] = 3
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("create_npc", strong)}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "Nothing stirs."})}},
	)
	res, err := (&agent.Runner{Narrative: m}).Run(context.Background(), &agent.Turn{No: 1, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Text: "I wait"})
	if err != nil {
		t.Fatal(err)
	}
	want := "Error: A new NPC here has level 1 to 2: the party's power is 1, and a fight holds at most power+1 levels of foes (never above 3)."
	if got := toolResults(res.Messages)["create_npc"]; got != want {
		t.Errorf("create_npc answered %q, want %q", got, want)
	}
	// The model read the refusal as the create_npc call's result.
	reqs := fake.Requests()
	if got := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1]; got.Role != "tool" || got.Content != want {
		t.Errorf("the model saw %+v", got)
	}
	for _, n := range st.World.NPCs {
		if n.Name == "Vesna" {
			t.Error("the refused NPC exists")
		}
	}
}

// The offline DM plays a created NPC by its tactics too: Vesna, hurt and
// alone, flees as her tactics say; without tactics she attacks.
func TestOfflineTacticsPlayACreatedNPC(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tactics string
		want    string
	}{
		{"flees when alone", "shoots from cover, flees when alone", "attempt_flee"},
		{"no tactics", "", "attack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, d, actor := loneHero(t)
			fake := openaitest.New(t, nil)
			m := newFakeModel(t, fake)
			profile := map[string]any{}
			for k, v := range vesna {
				profile[k] = v
			}
			profile["tactics"] = tc.tactics
			entry := createAndFight(t, fake, &agent.Runner{Narrative: m, Combat: m}, st, d, actor, profile)
			st.World.NPCs[entry.Ref].HP-- // hurt: below her max

			fake.SetFallback(openaitest.FromModel(offline.Narrator{}))
			res, err := (&agent.Runner{Combat: m}).Run(context.Background(), &agent.Turn{No: 2, Kind: agent.TurnNPC, State: st, Dice: d, Entry: entry})
			if err != nil {
				t.Fatal(err)
			}
			var first string
			for _, msg := range res.Messages {
				if len(msg.ToolCalls) > 0 {
					first = msg.ToolCalls[0].Function.Name
					break
				}
			}
			if first != tc.want {
				t.Errorf("offline DM played %q, want %q", first, tc.want)
			}
		})
	}
}

// The create_npc schema is built from the type its arguments decode into:
// every field of the profile is offered, the stats as an object.
func TestCreateNPCSchemaIsTheProfile(t *testing.T) {
	tool, ok := agent.NewNarrativeTools(agent.ToolDeps{}).Get("create_npc")
	if !ok {
		t.Fatal("no create_npc")
	}
	b, _ := json.Marshal(tool.Parameters)
	var schema struct {
		Properties map[string]struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"name", "kind", "location", "hostile", "behavior", "disposition", "faction", "personality",
		"tactics", "secret", "level", "hp", "stats", "weapon", "armour"} {
		if _, ok := schema.Properties[name]; !ok {
			t.Errorf("no %s in %s", name, b)
		}
	}
	if st := schema.Properties["stats"]; st.Type != "object" || len(st.Properties) != 6 {
		t.Errorf("stats %+v", st)
	}
	if got := schema.Properties["hp"].Type; got != "integer" {
		t.Errorf("hp is %q", got)
	}
}
