package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// game plays turns the way the hub does: the runner on the state, then
// the engine advances the initiative.
type game struct {
	t       *testing.T
	st      *engine.State
	dice    *engine.Dice
	r       *agent.Runner
	turn    int
	history map[string][]agent.Message
	log     []string
}

func newGame(t *testing.T) *game {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, 7)
	d := engine.NewDice(7)
	for i, spec := range []engine.NewCharacterSpec{{Name: "Aldric", Class: "warrior"}, {Name: "Brina", Class: "rogue"}} {
		if _, err := st.AddCharacter(d, "c"+string(rune('1'+i)), string(rune('1'+i)), "p", spec); err != nil {
			t.Fatal(err)
		}
	}
	return &game{t: t, st: st, dice: d, r: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, history: map[string][]agent.Message{}}
}

func (g *game) play(kind string, actor *engine.Character, text string) agent.Result {
	g.t.Helper()
	g.turn++
	tn := &agent.Turn{No: g.turn, Kind: kind, State: g.st, Dice: g.dice, Actor: actor, Text: text}
	if cb := g.st.Game.Combat; cb != nil {
		tn.Entry = cb.Current()
	}
	agentName := tn.AgentName()
	tn.History = g.history[agentName]
	res, err := g.r.Run(context.Background(), tn)
	if err != nil {
		g.t.Fatalf("turn %d (%s %q): %v", g.turn, kind, text, err)
	}
	g.history[agentName] = append(g.history[agentName], res.Messages...)
	if g.st.Game.Combat != nil && res.Output.Tool != "start_combat" {
		g.st.AdvanceTurn(g.dice)
	}
	g.log = append(g.log, res.Output.Narration)
	return res
}

func TestOfflineNarratorPlaysAGame(t *testing.T) {
	g := newGame(t)
	aldric, brina := g.st.Party[0], g.st.Party[1]

	res := g.play(agent.TurnPlayer, aldric, "I look around the square")
	if res.Output.Tool != "respond" || !strings.Contains(res.Output.Narration, "Greyhollow Square") {
		t.Fatalf("look: %+v", res.Output)
	}
	res = g.play(agent.TurnPlayer, brina, "I pick up the coil of rope")
	if it := g.st.World.Items["rope-1"]; it.OwnerType != engine.OwnerCharacter || it.OwnerID != brina.ID {
		t.Fatalf("rope owned by %s %s after %q", it.OwnerType, it.OwnerID, res.Output.Narration)
	}
	g.play(agent.TurnPlayer, aldric, "We head into the Crooked Lantern inn")
	if g.st.Game.Location != "tavern" || brina.Location != "tavern" {
		t.Fatalf("party at %s (Brina at %s), want the tavern: the party travels together", g.st.Game.Location, brina.Location)
	}
	res = g.play(agent.TurnPlayer, brina, "I ask Maren about the goblins and the lantern")
	if !strings.Contains(res.Output.Narration, "Maren") || !strings.Contains(res.Output.Narration, "mill") {
		t.Fatalf("talk: %q", res.Output.Narration)
	}
	g.play(agent.TurnPlayer, aldric, "back to the square")
	g.play(agent.TurnPlayer, aldric, "go to the old mill")
	if g.st.Game.Location != "mill" {
		t.Fatalf("at %s, want the mill", g.st.Game.Location)
	}
	res = g.play(agent.TurnPlayer, aldric, "I attack Snikket!")
	if res.Output.Tool != "start_combat" || g.st.Game.Mode != engine.ModeCombat {
		t.Fatalf("attack did not start combat: %+v", res.Output)
	}
	cb := g.st.Game.Combat
	if len(cb.Order) != 6 { // bookend, 2 PCs, 3 goblins
		t.Fatalf("initiative %+v", cb.Order)
	}

	// Fight: the DM plays its entries, the PCs attack, until it ends.
	for i := 0; g.st.Game.Mode == engine.ModeCombat; i++ {
		if i > 200 {
			t.Fatal("fight did not end in 200 turns")
		}
		cb := g.st.Game.Combat
		cur := cb.Current()
		switch {
		case cb.Ending != "":
			g.play(agent.TurnResolution, nil, "")
		case cur.Kind == engine.KindBookend:
			g.play(agent.TurnBookend, nil, "")
		case cur.Kind == engine.KindNPC:
			g.play(agent.TurnNPC, nil, "")
		default:
			g.play(agent.TurnPlayer, g.st.Character(cur.Ref), "I strike at the nearest goblin")
		}
		for _, c := range g.st.Party {
			if c.HP < 0 || c.HP > c.MaxHP {
				t.Fatalf("%s has %d/%d HP", c.Name, c.HP, c.MaxHP)
			}
		}
	}
	r := g.st.Game.LastCombatResult
	if r == nil || !engine.ValidOutcome(r.Outcome) {
		t.Fatalf("no combat result: %+v", r)
	}
	t.Logf("outcome %s, xp %d, gold %d, loot %v", r.Outcome, r.XP, r.Gold, r.Loot)
	res = g.play(agent.TurnPlayer, aldric, "I look around")
	if !g.st.Game.ResultSeen || res.Output.Tool != "respond" {
		t.Errorf("the narrative agent must be given the combat result once: %+v", res.Output)
	}
	for _, line := range g.log {
		t.Log(line)
	}
}

func TestOfflineNPCsFollowTactics(t *testing.T) {
	g := newGame(t)
	g.st.Game.Location = "mill"
	for _, c := range g.st.Party {
		c.Location = "mill"
	}
	if _, _, err := g.st.StartCombat(g.dice, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	cb := g.st.Game.Combat
	// Snikket "focuses the weakest": Brina is hurt, so he goes for her
	// (with his blade or his dirty tricks).
	g.st.Party[1].HP = 5
	g.st.Game.Spent = map[string]map[string]int{"n:snikket": {"bless": 1}} // no blessing first
	for cb.Current().Entry != "dm:snikket" {
		g.st.AdvanceTurn(g.dice)
	}
	res := g.play(agent.TurnNPC, nil, "")
	var target string
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls {
			if c.Function.Name == "attack" || c.Function.Name == "use_ability" {
				var a struct{ Target string }
				_ = json.Unmarshal([]byte(c.Function.Arguments), &a)
				target = a.Target
			}
		}
	}
	if target != "pc:2" {
		t.Errorf("Snikket attacked %q, want the weakest (pc:2)", target)
	}
	// Hurt below half (but not a third), he drinks his potion. (His HP
	// are scaled to the party: the thresholds are fractions of his max.)
	snikket := g.st.World.NPCs["snikket"]
	snikket.HP = snikket.MaxHP * 4 / 9
	for cb.Current().Entry != "dm:snikket" {
		g.st.AdvanceTurn(g.dice)
	}
	res = g.play(agent.TurnNPC, nil, "")
	if !strings.Contains(mustJSON(t, res.Messages), "use_item") || g.st.World.Items["potion-s1"] != nil {
		t.Errorf("a hurt Snikket should drink his potion: %s", res.Output.Narration)
	}
	// Below a third of his HP, the cowardly chief tries to flee.
	snikket.HP = snikket.MaxHP * 5 / 18
	for cb.Current().Entry != "dm:snikket" {
		g.st.AdvanceTurn(g.dice)
	}
	res = g.play(agent.TurnNPC, nil, "")
	if !strings.Contains(mustJSON(t, res.Messages), "attempt_flee") {
		t.Errorf("a hurt coward should try to flee: %s", res.Output.Narration)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
