package offline_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// TestEncounterBalance plays 200 seeded fights at the old mill per party
// size (1–4 level-1 PCs) and ruleset with the offline narrator, and reports
// the party's win rate and how long the fights last. The encounter is
// scaled to the party (engine: ScaleEncounter), so that a party wins most
// fights without them being trivial: every size wins at least 60% and
// loses some PCs or HP along the way (not every fight a walkover).
func TestEncounterBalance(t *testing.T) {
	if testing.Short() {
		t.Skip("plays 1600 fights")
	}
	if raceBuild {
		t.Skip("one goroutine and 1600 fights: make test runs it without -race")
	}
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	classes := []string{"warrior", "rogue", "mage", "cleric"}
	const fights = 200
	var table strings.Builder
	fmt.Fprintf(&table, "\n| ruleset | PCs | won | fled | lost | avg rounds | avg HP left |\n|---|---|---|---|---|---|---|\n")
	for _, ruleset := range []string{engine.RulesetD100, engine.RulesetD20} {
		for size := 1; size <= 4; size++ {
			var won, fled, lost, rounds int
			var hpLeft float64
			for seed := range fights {
				st := engine.NewState(engine.Config{Ruleset: ruleset, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, uint64(seed))
				d := engine.NewDice(uint64(seed)*7919 + uint64(size))
				for i := range size {
					seat := fmt.Sprint(i + 1)
					if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: "Hero" + seat, Class: classes[i%len(classes)]}); err != nil {
						t.Fatal(err)
					}
				}
				st.Game.Location = "mill"
				for _, c := range st.Party {
					c.Location = "mill"
				}
				out, r, frac := fight(t, st, d)
				rounds += r
				hpLeft += frac
				switch out {
				case engine.OutcomePlayerWin, engine.OutcomeNPCFlee:
					won++
				case engine.OutcomePlayerFlee:
					fled++
				default:
					lost++
				}
			}
			rate := float64(won) / fights
			fmt.Fprintf(&table, "| %s | %d | %.0f%% | %d | %d | %.1f | %.0f%% |\n", ruleset, size, 100*rate, fled, lost,
				float64(rounds)/fights, 100*hpLeft/fights)
			if rate < 0.6 {
				t.Errorf("%s, %d PCs: the party wins %.0f%% of fights; want at least 60%%", ruleset, size, 100*rate)
			}
			if rate == 1 && hpLeft/fights > 0.9 {
				t.Errorf("%s, %d PCs: every fight won with %.0f%% HP left: trivial", ruleset, size, 100*hpLeft/fights)
			}
		}
	}
	t.Log(table.String())
}

// fight plays one fight at the mill to its end: the first PC attacks
// Snikket, then the DM plays its entries and every PC attacks.
func fight(t *testing.T, st *engine.State, d *engine.Dice) (outcome engine.Outcome, rounds int, hpLeft float64) {
	t.Helper()
	r := &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}
	history := map[string][]agent.Message{}
	turn := 0
	play := func(kind string, actor *engine.Character, text string) {
		turn++
		tn := &agent.Turn{No: turn, Kind: kind, State: st, Dice: d, Actor: actor, Text: text}
		if cb := st.Game.Combat; cb != nil {
			tn.Entry = cb.Current()
		}
		tn.History = history[tn.AgentName()]
		res, err := r.Run(context.Background(), tn)
		if err != nil {
			t.Fatalf("turn %d (%s %q): %v", turn, kind, text, err)
		}
		history[tn.AgentName()] = append(history[tn.AgentName()], res.Messages...)
		if st.Game.Combat != nil && res.Output.Tool != "start_combat" {
			st.AdvanceTurn(d)
		}
	}
	play(agent.TurnPlayer, st.Party[0], "I attack Snikket!")
	if st.Game.Mode != engine.ModeCombat {
		t.Fatal("the attack did not start a fight")
	}
	for i := 0; st.Game.Mode == engine.ModeCombat; i++ {
		if i > 400 {
			t.Fatal("the fight did not end in 400 turns")
		}
		cb := st.Game.Combat
		rounds = cb.Round
		cur := cb.Current()
		switch {
		case cb.Ending != "":
			play(agent.TurnResolution, nil, "")
		case cur.Kind == engine.KindBookend:
			play(agent.TurnBookend, nil, "")
		case cur.Kind == engine.KindNPC:
			play(agent.TurnNPC, nil, "")
		default:
			play(agent.TurnPlayer, st.Character(cur.Ref), "I strike at the nearest goblin")
		}
	}
	var hp, maxHP int
	for _, c := range st.Party {
		hp += c.HP
		maxHP += c.MaxHP
	}
	return st.Game.LastCombatResult.Outcome, rounds, float64(hp) / float64(maxHP)
}

// One level-1 character at the mill: Snikket (named) and one more goblin
// join, at half HP; the Game remembers the scaling (it is persisted with
// the game state), so a second fight does not shrink them again.
func TestEncounterScaledOnceToASmallParty(t *testing.T) {
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, 3)
	d := engine.NewDice(3)
	if _, err := st.AddCharacter(d, "c1", "1", "p1", engine.NewCharacterSpec{Name: "Odo", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	st.Game.Location, st.Party[0].Location = "mill", "mill"
	full := st.World.NPCs["snikket"].MaxHP
	cb, _, err := st.StartCombat(d, []string{"snikket"})
	if err != nil {
		t.Fatal(err)
	}
	var foes []string
	for _, e := range cb.Order {
		if e.Kind == engine.KindNPC {
			foes = append(foes, e.Ref)
		}
	}
	if len(foes) != 2 || !slices.Contains(foes, "snikket") {
		t.Fatalf("foes %v; want Snikket and one more", foes)
	}
	if got := st.World.NPCs["snikket"].MaxHP; got != (full+1)/2 {
		t.Fatalf("Snikket max HP %d; want half of %d", got, full)
	}
	st = st.Clone()
	if _, _, err := st.EndCombat(engine.OutcomeForcedEnd, "called off"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	if got := st.World.NPCs["snikket"].MaxHP; got != (full+1)/2 {
		t.Errorf("after a second fight Snikket max HP %d; scaled twice", got)
	}
}
