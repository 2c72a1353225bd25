package offline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// adventureGame is a game of built-in adventure id for a party of the
// given classes, on seed.
func adventureGame(t *testing.T, id string, seed uint64, classes ...string) *game {
	t.Helper()
	return rulesetGame(t, engine.RulesetD100, id, seed, classes...)
}

// rulesetGame is adventureGame under a ruleset.
func rulesetGame(t *testing.T, ruleset, id string, seed uint64, classes ...string) *game {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, ok := lib.Get(id)
	if !ok {
		t.Fatalf("no adventure %q", id)
	}
	st := engine.NewState(engine.Config{Ruleset: ruleset, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, seed)
	d := engine.NewDice(seed)
	names := []string{"Aldric", "Brina", "Cora", "Dun"}
	for i, class := range classes {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: names[i], Class: class}); err != nil {
			t.Fatal(err)
		}
	}
	return &game{t: t, st: st, dice: d, r: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, history: map[string][]agent.Message{}}
}

// say plays a player's turn and returns the narration.
func (g *game) say(c *engine.Character, text string) string {
	g.t.Helper()
	n := g.play(agent.TurnPlayer, c, text).Output.Narration
	g.t.Logf("%s: %s\n    → %s", c.Name, text, n)
	return n
}

// walk moves the party and checks where it arrives.
func (g *game) walk(c *engine.Character, text, want string) {
	g.t.Helper()
	g.say(c, text)
	if g.st.Game.Location != want {
		g.t.Fatalf("%q: the party is at %s, want %s", text, g.st.Game.Location, want)
	}
}

// fightToTheEnd plays a fight until it ends, every PC attacking foe.
func (g *game) fightToTheEnd(foe string) engine.Outcome {
	g.t.Helper()
	for i := 0; g.st.Game.Mode == engine.ModeCombat; i++ {
		if i > 300 {
			g.t.Fatal("the fight did not end in 300 turns")
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
			g.play(agent.TurnPlayer, g.st.Character(cur.Ref), "I attack "+foe)
		}
	}
	return g.st.Game.LastCombatResult.Outcome
}

// TestBarrowPlayedToItsEnd plays the dungeon delve offline: the quest,
// two traps by skill checks, a door locked until its key is found, the
// king's secret refused, the fight with the king and his wight, and the
// crown brought back.
func TestBarrowPlayedToItsEnd(t *testing.T) {
	g := adventureGame(t, "barrow", 3, "warrior", "cleric", "rogue")
	aldric, brina, cora := g.st.Party[0], g.st.Party[1], g.st.Party[2]

	if s := g.say(aldric, "I ask Sister Ilse about the job"); !strings.Contains(s, "crown") {
		t.Errorf("Ilse gives no quest: %q", s)
	}
	if s := g.say(brina, "I ask Ilse what secret she is hiding"); strings.Contains(s, "sealed him in") {
		t.Errorf("Ilse tells her secret to strangers: %q", s)
	}
	if s := g.say(cora, "I ask Ilse which faction she serves"); !strings.Contains(s, "Lamplighters") {
		t.Errorf("Ilse's faction: %q", s)
	}
	g.say(aldric, "We accept the quest")
	if q := g.st.World.Quests["crown-quest"]; q.Status != engine.QuestActive {
		t.Fatalf("quest %s", q.Status)
	}
	cora.Gold = 30
	g.say(cora, "I buy a healing potion from Ilse")
	if !hasItem(g, cora, "Healing potion") || cora.Gold != 30-20 {
		t.Errorf("a potion at the shop's price: gold %d, items %v", cora.Gold, itemNames(g, cora))
	}

	g.walk(aldric, "go up the path to the barrow door", "mouth")
	hp := aldric.HP
	if s := g.say(aldric, "we go into the hall of blades"); !strings.Contains(s, "blades swing") {
		t.Errorf("no trap in the hall: %q", s)
	}
	if g.st.Game.Location != "hall" {
		t.Fatalf("at %s", g.st.Game.Location)
	}
	t.Logf("the trap: Aldric %d -> %d HP", hp, aldric.HP)
	if s := g.say(aldric, "I go through the bronze door"); !strings.Contains(s, "locked") || g.st.Game.Location != "hall" {
		t.Fatalf("the bronze door opens without its key: %q", s)
	}
	g.walk(brina, "I go through the crack in the east wall", "ossuary")
	g.say(brina, "I pick up the bronze key")
	if !hasItem(g, brina, "Bronze key") {
		t.Fatalf("no key: %v", itemNames(g, brina))
	}
	g.walk(brina, "we go back through the crack", "hall")
	g.walk(brina, "I unlock the bronze door and go through", "tomb")

	if s := g.say(cora, "I ask the Drowned King about his secret"); strings.Contains(s, "silt") {
		t.Errorf("the king tells his secret: %q", s)
	}
	g.say(aldric, "I attack Vorlag the Drowned King!")
	if g.st.Game.Mode != engine.ModeCombat {
		t.Fatal("no fight")
	}
	if out := g.fightToTheEnd("Vorlag"); out != engine.OutcomePlayerWin {
		t.Fatalf("the fight ended %s", out)
	}
	looter := aldric
	for _, c := range g.st.Party {
		if c.Conscious() {
			looter = c
			break
		}
	}
	g.say(looter, "I search the bodies")
	if !hasItem(g, looter, "The Drowned Crown") {
		t.Fatalf("no crown after the loot: %v", itemNames(g, looter))
	}
	g.walk(looter, "we go back through the bronze door", "hall")
	g.walk(looter, "back to the barrow mouth", "mouth")
	g.walk(looter, "we go back out to the camp", "camp")
	gold := looter.Gold
	g.say(looter, "I give the Drowned Crown to Sister Ilse")
	if q := g.st.World.Quests["crown-quest"]; q.Status != engine.QuestCompleted || looter.Gold <= gold {
		t.Fatalf("the quest is %s; gold %d -> %d", q.Status, gold, looter.Gold)
	}
}

// TestBrackwaterPlayedToItsEnd plays the town of intrigue offline: the
// quest is solved by talking and trading, not fighting. Each NPC answers
// what is asked from its profile; a potion sold to the honest chandler
// pays for the ledger the fence sells.
func TestBrackwaterPlayedToItsEnd(t *testing.T) {
	g := adventureGame(t, "brackwater", 5, "rogue", "mage")
	brina, mage := g.st.Party[0], g.st.Party[1]

	g.walk(brina, "I go to the Merchants' Guildhall", "guildhall")
	quest := g.say(brina, "I ask Odile about the work she offers")
	secret := g.say(brina, "I ask Odile what secret the ledger holds")
	faction := g.say(mage, "I ask Odile about the Salt Guild")
	if !strings.Contains(quest, "Salt Ledger") || strings.Contains(secret, "bribing") || !strings.Contains(faction, "salt") || quest == faction {
		t.Errorf("Odile on the quest: %q; on her secret: %q; on her faction: %q", quest, secret, faction)
	}
	g.say(brina, "We'll do it: we accept the job")
	g.walk(brina, "we go back down to the quay", "quay")
	g.walk(brina, "we go to the Watch House", "watch")
	if s := g.say(mage, "I ask Captain Harl for rumours"); !strings.Contains(s, "Eel Dens") {
		t.Errorf("Harl's rumour: %q", s)
	}
	g.walk(brina, "back to the quay", "quay")
	g.walk(brina, "I go to the Lantern Market", "market")
	if s := g.say(brina, "I ask Pell about the factions"); !strings.Contains(s, "Free Traders") {
		t.Errorf("Pell's faction: %q", s)
	}
	gold := brina.Gold
	s := g.say(brina, "I sell my healing potion to Pell")
	if brina.Gold != gold+12 || countItems(g, brina, "Healing potion") != 0 {
		t.Fatalf("sold a potion at half its price: gold %d -> %d: %q", gold, brina.Gold, s)
	}
	if s := g.say(brina, "I sell my linen bandage to Pell"); !strings.Contains(s, "will not pay") {
		t.Errorf("a bandage worth 1 sells for nothing: %q", s)
	}
	g.walk(brina, "back to the quay", "quay")
	g.walk(brina, "we go down the alleys to the Eel Dens", "dens")
	if s := g.say(mage, "I ask Nix about rumours"); !strings.Contains(s, "thirty gold") {
		t.Errorf("Nix's rumour: %q", s)
	}
	if s := g.say(mage, "I ask Nix what secret he is hiding"); strings.Contains(s, "twice the price") {
		t.Errorf("Nix tells his secret: %q", s)
	}
	g.say(brina, "I buy the Salt Ledger from Nix")
	if !hasItem(g, brina, "The Salt Ledger") || brina.Gold != gold+12-30 {
		t.Fatalf("the ledger at the fence's price: gold %d, items %v", brina.Gold, itemNames(g, brina))
	}
	g.walk(brina, "we go up the alleys to the quay", "quay")
	g.walk(brina, "we go to the Merchants' Guildhall", "guildhall")
	g.say(brina, "I give the Salt Ledger to Odile")
	if q := g.st.World.Quests["ledger-quest"]; q.Status != engine.QuestCompleted {
		t.Fatalf("the quest is %s", q.Status)
	}
	if g.st.Game.CombatSeq != 0 {
		t.Errorf("%d fights in a quest solved by talking and trading", g.st.Game.CombatSeq)
	}
	for _, n := range g.st.World.NPCs {
		if !n.Alive() {
			t.Errorf("%s died", n.Name)
		}
	}
}

// TestDrownedKingTactics: the king strikes the strongest and never flees,
// however hurt.
func TestDrownedKingTactics(t *testing.T) {
	g := adventureGame(t, "barrow", 3, "warrior", "mage")
	g.st.Game.Location = "tomb"
	for _, c := range g.st.Party {
		c.Location = "tomb"
	}
	if _, _, err := g.st.StartCombat(g.dice, []string{"vorlag"}); err != nil {
		t.Fatal(err)
	}
	king := g.st.World.NPCs["vorlag"]
	king.HP = 1
	for g.st.Game.Combat.Current().Entry != "dm:vorlag" {
		g.st.AdvanceTurn(g.dice)
	}
	res := g.play(agent.TurnNPC, nil, "")
	var calls []string
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.Function.Name+" "+c.Function.Arguments)
		}
	}
	weakest := "pc:2" // the mage has less HP than the warrior
	if len(calls) == 0 || !strings.HasPrefix(calls[0], "attack") && !strings.HasPrefix(calls[0], "use_ability") || !strings.Contains(calls[0], weakest) {
		t.Errorf("the king at 1 HP: %v; want a blow at the weakest (%s)", calls, weakest)
	}
}

// TestTrapChecksByRuleset: the engine checks a trap against its d100
// difficulty or its d20 DC, by the table's ruleset, as the party moves:
// the narrator calls no check of its own.
func TestTrapChecksByRuleset(t *testing.T) {
	for ruleset, want := range map[string]int{engine.RulesetD100: 45, engine.RulesetD20: 13} {
		t.Run(ruleset, func(t *testing.T) {
			g := rulesetGame(t, ruleset, "barrow", 1, "mage")
			g.walk(g.st.Party[0], "go up the path to the barrow door", "mouth")
			res := g.play(agent.TurnPlayer, g.st.Party[0], "we go into the hall of blades")
			moveID := ""
			var trap *engine.TrapSprung
			for _, m := range res.Messages {
				for _, c := range m.ToolCalls {
					if c.Function.Name == "skill_check" || c.Function.Name == "update_player_health" {
						t.Errorf("the narrator rolls the trap itself: %s(%s)", c.Function.Name, c.Function.Arguments)
					}
					if c.Function.Name == "move_party" {
						moveID = c.ID
					}
				}
				if m.Role == "tool" && moveID != "" && m.ToolCallID == moveID {
					var out struct{ Trap *engine.TrapSprung }
					if err := json.Unmarshal([]byte(m.Content), &out); err != nil {
						t.Fatal(err)
					}
					trap = out.Trap
				}
			}
			if trap == nil || trap.Difficulty != want || trap.Stat != "agi" || trap.Leader != g.st.Party[0].Name {
				t.Fatalf("move_party's trap %+v, want an agi check against %d led by %s", trap, want, g.st.Party[0].Name)
			}
			if hurt := g.st.Party[0].HP < g.st.Party[0].MaxHP; hurt == trap.Success {
				t.Errorf("trap success %v, but HP %d/%d", trap.Success, g.st.Party[0].HP, g.st.Party[0].MaxHP)
			}
		})
	}
}
