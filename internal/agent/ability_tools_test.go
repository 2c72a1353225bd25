package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/openai/openaitest"
)

// The model names an ability and a target through the OpenAI-compatible
// server; the engine rolls it and spends a use. A spent ability is refused
// with a sentence naming what is ready, and nothing changes; the model
// never supplies a result (the schema has no field for one).
func TestUseAbilityThroughTheModel(t *testing.T) {
	st, d, actor := loneHero(t)
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	st.Game.Combat.Index = slices.IndexFunc(st.Game.Combat.Order, func(e engine.Combatant) bool { return e.Entry == engine.PCEntry("1") })
	actor.HP = 10
	fake := openaitest.New(t, nil)
	m := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: m, Combat: m}
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("use_ability", map[string]any{"ability": "second_wind"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("continue_combat", map[string]any{"narration": "Aldric steadies himself."})}},
	)
	res, err := r.Run(context.Background(), &agent.Turn{No: 2, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Entry: st.Game.Combat.Current(), Text: "I catch my second wind"})
	if err != nil {
		t.Fatal(err)
	}
	var out engine.AbilityOutcome
	if err := json.Unmarshal([]byte(toolResults(res.Messages)["use_ability"]), &out); err != nil {
		t.Fatal(err)
	}
	if out.AbilityID != "second_wind" || out.UsesLeft != 0 || len(out.Heals) != 1 || actor.HP <= 10 {
		t.Fatalf("outcome %+v, HP %d", out, actor.HP)
	}
	var kinds []engine.Kind
	for _, e := range res.Events {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Contains(kinds, engine.EventAbility) || !slices.Contains(kinds, engine.EventDice) || !slices.Contains(kinds, engine.EventHeal) {
		t.Errorf("events %v", kinds)
	}
	reqs := fake.Requests()
	req := reqs[0]
	i := slices.IndexFunc(req.Tools, func(s agent.ToolSpec) bool { return s.Name == "use_ability" })
	if i < 0 {
		t.Fatalf("no use_ability among %v", req.ToolNames())
	}
	props, _ := json.Marshal(req.Tools[i].Parameters["properties"])
	if !strings.Contains(string(props), `"ability"`) || !strings.Contains(string(props), `"target"`) || !strings.Contains(string(props), `"magic_missile"`) || strings.Contains(string(props), "damage") {
		t.Errorf("use_ability schema %s", props)
	}
	ctx, _, err := agent.ReadTurnMessage(req.Messages[len(req.Messages)-1].Content)
	if err != nil || ctx.Actor == nil || len(ctx.Actor.Abilities) != 3 || ctx.Actor.Abilities[0].Uses != 1 {
		t.Fatalf("the turn's context lists abilities %+v (%v)", ctx.Actor, err)
	}

	// Spent: the refusal says what is ready; the model then attacks.
	hp := actor.HP
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("use_ability", map[string]any{"ability": "second_wind"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("use_ability", map[string]any{"ability": "power_attack", "target": "Snikket"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("continue_combat", map[string]any{"narration": "Aldric swings."})}},
	)
	res, err = r.Run(context.Background(), &agent.Turn{No: 3, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Entry: st.Game.Combat.Current(), Text: "second wind again"})
	if err != nil {
		t.Fatal(err)
	}
	var refusal string
	for _, m := range res.Messages {
		if m.Role == "tool" && strings.Contains(m.Content, "no use of Second wind left") {
			refusal = m.Content
		}
	}
	if !strings.Contains(refusal, "ready: Power attack (power_attack, 2/2)") || actor.HP != hp {
		t.Errorf("refusal %q, HP %d → %d", refusal, hp, actor.HP)
	}
	if got := toolResults(res.Messages)["use_ability"]; !strings.Contains(got, `"ability_id":"power_attack"`) {
		t.Errorf("power attack answered %s", got)
	}
}

// A rest through the narrative agent heals and restores uses; a second
// one right after is refused.
func TestRestThroughTheModel(t *testing.T) {
	st, d, actor := loneHero(t)
	actor.HP = 5
	st.Game.Spent = map[string]map[string]int{"c:c1": {"second_wind": 1}}
	st.Game.Turn = 4
	fake := openaitest.New(t, nil)
	m := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: m}
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("rest", map[string]any{"kind": "short"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("rest", map[string]any{"kind": "long"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "You rest by the well."})}},
	)
	res, err := r.Run(context.Background(), &agent.Turn{No: 4, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Text: "we take a short rest"})
	if err != nil {
		t.Fatal(err)
	}
	if actor.HP <= 5 || len(st.Game.Spent) != 0 {
		t.Errorf("after a short rest: HP %d, spent %v", actor.HP, st.Game.Spent)
	}
	var refused bool
	for _, m := range res.Messages {
		refused = refused || (m.Role == "tool" && strings.Contains(m.Content, "only just rested"))
	}
	if !refused {
		t.Error("a second rest in the same turn was not refused")
	}
}

// In narrative combat the DM may make a foe use its ability in the same
// beat (user), as it may make one attack; in tactical combat it may not.
func TestFoeAbilityInNarrativeCombat(t *testing.T) {
	for _, mode := range []string{engine.CombatNarrative, engine.CombatTactical} {
		st, d, actor := loneHero(t)
		st.Config.CombatMode = mode
		if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.StartCombat(d, []string{"goblin-brute"}); err != nil {
			t.Fatal(err)
		}
		st.Game.Combat.Index = slices.IndexFunc(st.Game.Combat.Order, func(e engine.Combatant) bool { return e.Entry == engine.PCEntry("1") })
		fake := openaitest.New(t, nil)
		m := newFakeModel(t, fake)
		fake.Push(
			openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("use_ability", map[string]any{"ability": "power_attack", "target": "pc:1", "user": "dm:goblin-brute"})}},
			openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("continue_combat", map[string]any{"narration": "The brute swings."})}},
		)
		res, err := (&agent.Runner{Combat: m}).Run(context.Background(), &agent.Turn{No: 2, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Entry: st.Game.Combat.Current(), Text: "I wait"})
		if err != nil {
			t.Fatal(err)
		}
		used := false
		for _, e := range res.Events {
			if d, ok := e.Data.(engine.AbilityData); ok && d.Actor == "Rotfang brute" {
				used = true
			}
		}
		if used != (mode == engine.CombatNarrative) {
			t.Errorf("%s combat: the brute used power attack: %v", mode, used)
		}
	}
}
