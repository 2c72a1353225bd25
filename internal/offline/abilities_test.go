package offline_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// partyGame is newGame with one character of each class named: Odo the
// warrior, Mira the rogue, Sel the mage and Tam the cleric.
func partyGame(t *testing.T, ruleset string) *game {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: ruleset, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, 5)
	d := engine.NewDice(5)
	for i, spec := range []engine.NewCharacterSpec{{Name: "Odo", Class: "warrior"}, {Name: "Mira", Class: "rogue"}, {Name: "Sel", Class: "mage"}, {Name: "Tam", Class: "cleric"}} {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, spec); err != nil {
			t.Fatal(err)
		}
	}
	return &game{t: t, st: st, dice: d, r: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, history: map[string][]agent.Message{}}
}

// fightAtTheMill moves the party to the mill and starts the fight, then
// gives the turn to who.
func (g *game) fightAtTheMill(who *engine.Character) {
	g.t.Helper()
	if _, _, _, err := g.st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		g.t.Fatal(err)
	}
	if _, _, err := g.st.StartCombat(g.dice, []string{"snikket"}); err != nil {
		g.t.Fatal(err)
	}
	g.turnOf(who)
}

func (g *game) turnOf(who *engine.Character) {
	cb := g.st.Game.Combat
	cb.Index = slices.IndexFunc(cb.Order, func(e engine.Combatant) bool { return e.Entry == engine.PCEntry(who.Seat) })
}

// calls lists a turn's tool calls as "name {args}".
func calls(res agent.Result) []string {
	var out []string
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls {
			out = append(out, c.Function.Name+" "+c.Function.Arguments)
		}
	}
	return out
}

func TestOfflineAbilityPhrases(t *testing.T) {
	cases := []struct {
		who, words, want string
		setup            func(g *game)
	}{
		{who: "Sel", words: "I cast sleep on the goblins", want: `use_ability {"ability":"sleep"}`},
		{who: "Sel", words: "I cast sleep on the archer", want: `use_ability {"ability":"sleep","target":"dm:goblin-archer"}`},
		{who: "Sel", words: "magic missile at Snikket", want: `use_ability {"ability":"magic_missile","target":"dm:snikket"}`},
		{who: "Sel", words: "I hurl a firebolt at the brute", want: `use_ability {"ability":"firebolt","target":"dm:goblin-brute"}`},
		{who: "Sel", words: "I cast shield", want: `use_ability {"ability":"shield"}`},
		{who: "Odo", words: "I catch my second wind", want: `use_ability {"ability":"second_wind"}`,
			setup: func(g *game) { g.st.Party[0].HP = 3 }},
		{who: "Odo", words: "power attack the brute!", want: `use_ability {"ability":"power_attack","target":"dm:goblin-brute"}`},
		{who: "Odo", words: "Shield wall, everyone!", want: `use_ability {"ability":"shield_wall"}`},
		{who: "Odo", words: "I attack Snikket", want: `attack {"target":"dm:snikket"}`},
		{who: "Mira", words: "I hide in the reeds", want: `use_ability {"ability":"hide"}`},
		{who: "Mira", words: "sneak attack the archer", want: `use_ability {"ability":"sneak_attack","target":"dm:goblin-archer"}`,
			setup: func(g *game) {
				g.st.Game.Combat.Engaged = map[engine.EntryID]engine.EntryID{"pc:1": "dm:goblin-archer"}
			}},
		{who: "Mira", words: "I disarm Snikket", want: `use_ability {"ability":"disarm","target":"dm:snikket"}`},
		{who: "Tam", words: "I heal Odo", want: `use_ability {"ability":"healing_word","target":"pc:1"}`,
			setup: func(g *game) { g.st.Party[0].HP = 3 }},
		{who: "Tam", words: "I bless the party", want: `use_ability {"ability":"bless"}`},
		{who: "Tam", words: "Revive Mira!", want: `use_ability {"ability":"revive","target":"pc:2"}`,
			setup: func(g *game) { g.st.Party[1].HP, g.st.Party[1].Statuses = 0, []string{engine.StatusUnconscious} }},
		{who: "Odo", words: "give my potion to Mira", want: `use_item {"item":"c1-kit-1","target":"pc:2"}`,
			setup: func(g *game) { g.st.Party[1].HP, g.st.Party[1].Statuses = 0, []string{engine.StatusUnconscious} }},
	}
	for _, tc := range cases {
		t.Run(tc.words, func(t *testing.T) {
			g := partyGame(t, engine.RulesetD20)
			who := g.st.FindCharacter(tc.who)
			g.fightAtTheMill(who)
			if tc.setup != nil {
				tc.setup(g)
			}
			res := g.play(agent.TurnPlayer, who, tc.words)
			got := calls(res)
			if len(got) == 0 || got[0] != tc.want {
				t.Fatalf("calls %v; want first %s", got, tc.want)
			}
			if strings.HasPrefix(got[1], "attack ") && tc.want != got[1] {
				t.Errorf("the ability was refused: %v\n%s", got, res.Output.Narration)
			}
			t.Log(res.Output.Narration)
		})
	}
}

// A potion given to a fallen friend in a fight brings them round; one
// drunk at full HP is refused with a warning and kept.
func TestOfflinePotionForAFallenFriend(t *testing.T) {
	g := partyGame(t, engine.RulesetD100)
	odo, mira := g.st.Party[0], g.st.Party[1]
	g.fightAtTheMill(odo)
	res := g.play(agent.TurnPlayer, odo, "I drink a potion")
	if countItems(g, odo, "Healing potion") != 1 || !strings.Contains(res.Output.Narration, "would be wasted") {
		t.Fatalf("a potion at full HP: %d left; %q", countItems(g, odo, "Healing potion"), res.Output.Narration)
	}
	mira.HP, mira.Statuses = 0, []string{engine.StatusUnconscious}
	g.turnOf(odo)
	res = g.play(agent.TurnPlayer, odo, "I pour my healing potion into Mira's mouth")
	if !mira.Conscious() || mira.HP == 0 || countItems(g, odo, "Healing potion") != 0 || !strings.Contains(res.Output.Narration, "Mira") {
		t.Fatalf("Mira %d HP %v; potions %d; %q", mira.HP, mira.Statuses, countItems(g, odo, "Healing potion"), res.Output.Narration)
	}
}

// Rests out of a fight: a short one heals some and restores short-rest
// uses; one right after is refused; a long one after some play heals all.
func TestOfflineRests(t *testing.T) {
	g := partyGame(t, engine.RulesetD20)
	odo, sel := g.st.Party[0], g.st.Party[2]
	odo.HP = 2
	g.st.Game.Spent = map[string]map[string]int{"c:c1": {"second_wind": 1}, "c:c3": {"sleep": 1, "magic_missile": 2}}
	play := func(text string) string {
		g.st.Game.Turn = g.turn + 1
		return g.play(agent.TurnPlayer, odo, text).Output.Narration
	}
	n := play("we take a short rest")
	if odo.HP <= 2 || g.st.Game.Spent["c:c1"] != nil || g.st.Game.Spent["c:c3"]["sleep"] != 1 || !strings.Contains(n, "Ready again") {
		t.Fatalf("after a short rest: Odo %d HP, spent %v; %q", odo.HP, g.st.Game.Spent, n)
	}
	if n := play("we camp for the night"); !strings.Contains(n, "only just rested") {
		t.Errorf("a rest right after a rest: %q", n)
	}
	play("look around")
	if n := play("we make camp for the night"); len(g.st.Game.Spent) > 0 || odo.HP != odo.MaxHP {
		t.Errorf("after a long rest: spent %v, Odo %d/%d; %q", g.st.Game.Spent, odo.HP, odo.MaxHP, n)
	}
	_ = sel
	g.st.Game.Location = "mill"
	for _, c := range g.st.Party {
		c.Location = "mill"
	}
	g.turn += 5
	if n := play("we rest a while"); !strings.Contains(n, "foes about") {
		t.Errorf("a rest among goblins: %q", n)
	}
}

// Drop and pick up work offline, and an item changes hands in the party.
func TestOfflineDropPickUpAndGive(t *testing.T) {
	g := partyGame(t, engine.RulesetD100)
	odo, mira := g.st.Party[0], g.st.Party[1]
	n := g.play(agent.TurnPlayer, odo, "drop Healing potion").Output.Narration
	if hasItem(g, odo, "Healing potion") || !strings.Contains(n, "sets down") {
		t.Fatalf("drop: %q; inventory %v", n, itemNames(g, odo))
	}
	if n := g.play(agent.TurnPlayer, odo, "pick up the healing potion").Output.Narration; !hasItem(g, odo, "Healing potion") {
		t.Fatalf("pick up: %q", n)
	}
	before := countItems(g, mira, "Healing potion")
	n = g.play(agent.TurnPlayer, odo, "give my potion to Mira").Output.Narration
	if countItems(g, mira, "Healing potion") != before+1 || hasItem(g, odo, "Healing potion") || !strings.Contains(n, "Mira") {
		t.Fatalf("give: %q; Mira %v", n, itemNames(g, mira))
	}
}

// An NPC whose profile lists abilities uses them: a hurt Snikket with
// second wind catches it.
func TestOfflineNPCUsesItsAbilities(t *testing.T) {
	g := partyGame(t, engine.RulesetD100)
	g.st.Game.NPCAbilities = map[string][]string{"snikket": {"second_wind"}}
	g.fightAtTheMill(g.st.Party[0])
	sn := g.st.World.NPCs["snikket"]
	sn.HP = sn.MaxHP/2 - 1
	cb := g.st.Game.Combat
	cb.Index = slices.IndexFunc(cb.Order, func(e engine.Combatant) bool { return e.Entry == engine.NPCEntry("snikket") })
	sn.Statuses = nil
	res := g.play(agent.TurnNPC, nil, "")
	got := calls(res)
	if len(got) == 0 || !strings.HasPrefix(got[0], `use_ability {"ability":"second_wind"`) {
		t.Fatalf("Snikket's calls %v", got)
	}
	var seen bool
	for _, e := range res.Events {
		if e.Kind == engine.EventAbility {
			b, _ := json.Marshal(e.Data)
			seen = strings.Contains(string(b), `"actor":"Snikket"`)
		}
	}
	if !seen {
		t.Error("no ability event for Snikket")
	}
}

// The sheet's "use" button sends "use <item name>": it works out of a
// fight and in one, and warns instead of wasting a potion at full HP.
func TestOfflineUseFromTheSheet(t *testing.T) {
	g := partyGame(t, engine.RulesetD100)
	odo := g.st.Party[0]
	if n := g.play(agent.TurnPlayer, odo, "use Healing potion").Output.Narration; countItems(g, odo, "Healing potion") != 1 || !strings.Contains(n, "would be wasted") {
		t.Fatalf("at full HP: %q", n)
	}
	odo.HP = 10
	if n := g.play(agent.TurnPlayer, odo, "use Healing potion").Output.Narration; countItems(g, odo, "Healing potion") != 0 || odo.HP <= 10 {
		t.Fatalf("hurt, out of a fight: %q, HP %d", n, odo.HP)
	}
	sel := g.st.Party[2]
	g.fightAtTheMill(sel)
	sel.HP = 2
	res := g.play(agent.TurnPlayer, sel, "use Healing potion")
	if got := calls(res); len(got) == 0 || !strings.HasPrefix(got[0], "use_item ") || sel.HP <= 2 {
		t.Fatalf("in a fight: %v, HP %d", got, sel.HP)
	}
}
