package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

// fightState returns a two-PC state at the mill, in combat with the
// goblins, and the PC turn context of Aldric.
func fightState(t *testing.T, combatMode string) (*engine.State, *engine.Dice) {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100, CombatMode: combatMode}, adv, lib.Catalogue, 3)
	d := engine.NewDice(3)
	for _, c := range []struct{ id, seat, name, class string }{{"c1", "1", "Aldric", "warrior"}, {"c2", "2", "Brina", "cleric"}} {
		if _, err := st.AddCharacter(d, c.id, c.seat, "p"+c.seat, engine.NewCharacterSpec{Name: c.name, Class: c.class}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		t.Fatal(err)
	}
	return st, d
}

func runTool(t *testing.T, reg *Toolset, tc *ToolContext, name string, args any) (string, error) {
	t.Helper()
	tool, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	b, _ := json.Marshal(args)
	return tool.Run(t.Context(), tc, b)
}

func TestToolsRefuseBadArguments(t *testing.T) {
	type tcase struct {
		name    string
		setup   func(st *engine.State, d *engine.Dice) *Turn
		tool    string
		args    any
		mention string
	}
	narrative := func(st *engine.State, d *engine.Dice) *Turn {
		return &Turn{Kind: TurnPlayer, State: st, Dice: d, Actor: st.Party[0]}
	}
	inFight := func(kind string) func(st *engine.State, d *engine.Dice) *Turn {
		return func(st *engine.State, d *engine.Dice) *Turn {
			if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
				t.Fatal(err)
			}
			st.World.NPCs["goblin-brute"].HP = 0
			st.World.NPCs["goblin-brute"].Statuses = []string{engine.StatusDead}
			tn := &Turn{Kind: kind, State: st, Dice: d}
			switch kind {
			case TurnPlayer:
				tn.Actor = st.Party[0]
			case TurnNPC:
				tn.Entry, _ = st.Game.Combat.Entry("dm:snikket")
			}
			return tn
		}
	}
	cases := []tcase{
		{"attack: not in combat", narrative, "attack", map[string]string{"target": "snikket"}, "no fight"},
		{"attack: dead target", inFight(TurnPlayer), "attack", map[string]string{"target": "Rotfang brute"}, "already down"},
		{"attack: unknown name", inFight(TurnPlayer), "attack", map[string]string{"target": "the dragon"}, "not in this fight"},
		{"attack: on the bookend", inFight(TurnBookend), "attack", map[string]string{"target": "snikket"}, "Nobody acts"},
		{"attack: another PC as attacker", inFight(TurnPlayer), "attack", map[string]string{"target": "snikket", "attacker": "pc:2"}, "initiative is enforced"},
		{"attack: an ally", inFight(TurnPlayer), "attack", map[string]string{"target": "Brina"}, "ally"},
		{"attack: missing target", inFight(TurnPlayer), "attack", map[string]string{}, "needs target"},
		{"attack: unknown field", inFight(TurnPlayer), "attack", map[string]string{"target": "snikket", "damage": "99"}, "unknown field"},
		{"use_item: item not owned", inFight(TurnPlayer), "use_item", map[string]string{"item": "potion-s1"}, "does not own"},
		{"use_item: not a consumable", inFight(TurnNPC), "use_item", map[string]string{"item": "crown-1"}, "only consumables"},
		{"use_item: unknown", inFight(TurnPlayer), "use_item", map[string]string{"item": "elixir of life"}, "has no"},
		{"heal: dead target", inFight(TurnPlayer), "heal", map[string]string{"target": "goblin-brute", "dice": "1d6"}, "cannot be healed"},
		{"heal: too strong", inFight(TurnPlayer), "heal", map[string]string{"target": "Brina", "dice": "20d20"}, "too strong"},
		{"apply_effect: unknown effect", inFight(TurnBookend), "apply_effect", map[string]string{"target": "snikket", "effect": "petrified"}, "Unknown effect"},
		{"apply_damage: dead", inFight(TurnBookend), "apply_damage", map[string]string{"target": "goblin-brute", "dice": "1d6", "reason": "fire"}, "already down"},
		{"add_combatant: elsewhere", inFight(TurnBookend), "add_combatant", map[string]string{"npc": "maren"}, "not here"},
		{"add_combatant: already in", inFight(TurnBookend), "add_combatant", map[string]string{"npc": "snikket"}, "already in the fight"},
		{"end_combat: false victory", inFight(TurnBookend), "end_combat", map[string]string{"narration": "We won", "outcome": "player_win"}, "not over"},
		{"end_combat: unknown outcome", inFight(TurnBookend), "end_combat", map[string]string{"narration": "x", "outcome": "draw"}, "Unknown outcome"},
		{"check status: not in combat", narrative, "check_combat_status", map[string]string{}, "no fight"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, d := fightState(t, engine.CombatTactical)
			tn := c.setup(st, d)
			reg := NewCombatTools(ToolDeps{})
			before := st.Clone()
			_, err := runTool(t, reg, &ToolContext{Turn: tn, State: st, Dice: d}, c.tool, c.args)
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("err = %v, want it to mention %q", err, c.mention)
			}
			before.RNG, st.RNG = engine.RNGState{}, engine.RNGState{}
			if !reflect.DeepEqual(before, st.Clone()) && !reflect.DeepEqual(mustJSON(before), mustJSON(st)) {
				t.Error("a refused tool call changed the state")
			}
		})
	}
}

func TestNarrativeToolsRefuseBadArguments(t *testing.T) {
	cases := []struct {
		name, tool string
		args       any
		mention    string
	}{
		{"move: no such exit", "move_party", map[string]string{"to": "the moon"}, "no way"},
		{"pickup: owned by an NPC", "pickup_item", map[string]string{"item": "lantern-1"}, "belongs to someone"},
		{"pickup: not here", "pickup_item", map[string]string{"item": "golden idol"}, "no \"golden idol\" here"},
		{"npc: unknown", "get_npc_info", map[string]string{"npc": "Gandalf"}, "No NPC"},
		{"start_combat: unknown foe", "start_combat", map[string]any{"narration": "x", "foes": []string{"dragon"}}, "no NPC"},
		{"start_combat: no foes", "start_combat", map[string]any{"narration": "x", "foes": []string{}}, "at least one"},
		{"respond: empty narration", "respond", map[string]any{"narration": ""}, "needs narration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, d := fightState(t, engine.CombatTactical)
			before := mustJSON(st)
			tc := &ToolContext{Turn: &Turn{Kind: TurnPlayer, State: st, Dice: d, Actor: st.Party[0]}, State: st, Dice: d}
			_, err := runTool(t, NewNarrativeTools(ToolDeps{}), tc, c.tool, c.args)
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("err = %v, want it to mention %q", err, c.mention)
			}
			if mustJSON(st) != before || tc.Output != nil {
				t.Error("a refused tool call changed the state or ended the turn")
			}
		})
	}
}

func TestOneActionPerTurn(t *testing.T) {
	st, d := fightState(t, engine.CombatTactical)
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	tc := &ToolContext{Turn: &Turn{Kind: TurnPlayer, State: st, Dice: d, Actor: st.Party[0]}, State: st, Dice: d}
	if _, err := runTool(t, NewCombatTools(ToolDeps{}), tc, "defend", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, NewCombatTools(ToolDeps{}), tc, "attack", map[string]string{"target": "snikket"}); err == nil || !strings.Contains(err.Error(), "already acted") {
		t.Fatalf("second action: %v", err)
	}
}

func TestNarrativeCombatLetsFoesAnswer(t *testing.T) {
	st, d := fightState(t, engine.CombatNarrative)
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	tc := &ToolContext{Turn: &Turn{Kind: TurnPlayer, State: st, Dice: d, Actor: st.Party[0]}, State: st, Dice: d}
	if _, err := runTool(t, NewCombatTools(ToolDeps{}), tc, "attack", map[string]string{"target": "snikket"}); err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, NewCombatTools(ToolDeps{}), tc, "attack", map[string]string{"attacker": "dm:goblin-archer", "target": "pc:1"}); err != nil {
		t.Fatalf("a foe answering in narrative combat: %v", err)
	}
	if _, err := runTool(t, NewCombatTools(ToolDeps{}), tc, "attack", map[string]string{"attacker": "dm:goblin-archer", "target": "pc:1"}); err == nil {
		t.Fatal("the same foe acted twice in one beat")
	}
}
