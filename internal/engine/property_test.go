package engine

import (
	"fmt"
	"testing"
)

// randomFight builds a party of 1–4 PCs against 1–5 NPCs, all seeded.
func randomFight(t *testing.T, ruleset string, seed uint64) (*State, *Dice) {
	t.Helper()
	d := NewDice(seed)
	adv := testAdventure()
	for i := range d.Intn(4) {
		adv.NPCs = append(adv.NPCs, NPC{
			ID: fmt.Sprintf("extra%d", i), Name: fmt.Sprintf("Extra %d", i), Kind: "bandit", Location: "den", Hostile: true,
			Level: 1 + d.Intn(3), HP: 5 + d.Intn(20), HPD20: 3 + d.Intn(8), Gold: d.Intn(5),
			Stats: Stats{STR: 6 + d.Intn(10), AGI: 6 + d.Intn(10)}, Weapon: []string{"sword", "knife", "bow"}[d.Intn(3)],
			Abilities: []string{AbilityIDs()[d.Intn(len(AbilityIDs()))]},
		})
	}
	st := NewState(Config{Ruleset: ruleset}, adv, testCatalogue(), seed)
	classes := []string{"warrior", "rogue"}
	for i := range 1 + d.Intn(4) {
		seat := fmt.Sprint(i + 1)
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, NewCharacterSpec{Name: "PC" + seat, Class: classes[d.Intn(2)]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(NewDice(1), "", "den"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"boss"}); err != nil {
		t.Fatal(err)
	}
	return st, d
}

// TestPropertiesOverRandomFights plays thousands of seeded fights with a
// random policy (attack, defend, flee, potions, heals, effects) and checks
// after every step: HP stays within 0..max; the queue never hands a turn
// to a dead, unconscious or fled combatant; every fight ends within
// MaxRounds; and it always returns to narrative mode with a result.
func TestPropertiesOverRandomFights(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	outcomes := map[string]int{}
	for _, ruleset := range []string{RulesetD100, RulesetD20} {
		for seed := range uint64(n) {
			st, d := randomFight(t, ruleset, seed)
			maxSteps := (MaxRounds + 1) * (len(st.Game.Combat.Order) + 1) * 2
			for step := 0; st.Game.Mode == ModeCombat; step++ {
				if step > maxSteps {
					t.Fatalf("%s seed %d: fight still running after %d steps", ruleset, seed, step)
				}
				cb := st.Game.Combat
				if cb.Ending != "" {
					if _, _, err := st.EndCombat("", ""); err != nil {
						t.Fatalf("%s seed %d: end: %v", ruleset, seed, err)
					}
					break
				}
				cur := cb.Current()
				if !st.CanAct(cur) {
					t.Fatalf("%s seed %d round %d: turn given to %s who cannot act", ruleset, seed, cb.Round, cur.Entry)
				}
				randomAction(st, d, cur)
				st.AdvanceTurn(d)
				checkHP(t, st, ruleset, seed)
			}
			r := st.Game.LastCombatResult
			if st.Game.Mode != ModeNarrative || st.Game.Combat != nil || r == nil || !ValidOutcome(r.Outcome) {
				t.Fatalf("%s seed %d: mode %s result %+v", ruleset, seed, st.Game.Mode, r)
			}
			outcomes[ruleset+" "+string(r.Outcome)]++
		}
	}
	t.Logf("outcomes over %d fights per ruleset: %v", n, outcomes)
}

func randomAction(st *State, d *Dice, cur Combatant) {
	var foes, allies []Combatant
	for _, e := range st.Game.Combat.Order {
		if e.Kind == KindBookend || !st.CanAct(e) || e.Entry == cur.Entry {
			continue
		}
		if st.Side(e) == st.Side(cur) {
			allies = append(allies, e)
		} else {
			foes = append(foes, e)
		}
	}
	if cur.Kind == KindBookend {
		if d.Intn(5) == 0 && len(foes)+len(allies) > 0 {
			all := append(foes, allies...)
			_, _ = st.ApplyEffect(string(all[d.Intn(len(all))].Entry), EffectNames()[d.Intn(4)], 0, "")
		}
		return
	}
	switch r := d.Intn(100); {
	case r < 20 && len(st.CombatantAbilities(cur)) > 0:
		// Abilities on any combatant, refused or not: a refusal must
		// change nothing, a use keeps HP and the queue in bounds.
		as := st.CombatantAbilities(cur)
		all := append(append([]Combatant{}, foes...), allies...)
		target := ""
		if len(all) > 0 {
			target = string(all[d.Intn(len(all))].Entry)
		}
		_, _, _ = st.UseAbility(d, string(cur.Entry), as[d.Intn(len(as))].ID, target)
	case r < 70 && len(foes) > 0:
		if _, _, err := st.Attack(d, string(cur.Entry), string(foes[d.Intn(len(foes))].Entry)); err != nil {
			panic(err) // the policy only picks valid targets
		}
	case r < 80:
		_, _ = st.Defend(string(cur.Entry))
	case r < 86:
		_, _, _ = st.Flee(d, string(cur.Entry))
	case r < 93 && cur.Kind == KindPC:
		if inv := st.Inventory(cur.Ref); len(inv) > 0 {
			_, _, _ = st.UseItem(d, string(cur.Entry), inv[0].ID, "")
		}
	default:
		if len(allies) > 0 {
			_, _, _ = st.Heal(d, cur.Name, string(allies[d.Intn(len(allies))].Entry), "1d8")
		}
	}
	_ = DiceEvents(d)
}

func checkHP(t *testing.T, st *State, ruleset string, seed uint64) {
	t.Helper()
	for _, c := range st.Party {
		if c.HP < 0 || c.HP > c.MaxHP {
			t.Fatalf("%s seed %d: %s has %d/%d HP", ruleset, seed, c.Name, c.HP, c.MaxHP)
		}
	}
	for _, n := range st.World.NPCs {
		if n.HP < 0 || n.HP > n.MaxHP {
			t.Fatalf("%s seed %d: %s has %d/%d HP", ruleset, seed, n.Name, n.HP, n.MaxHP)
		}
	}
}

// TestReplayReproducesFight: the same seed and the same choices give the
// same fight, including when the state and dice are saved and restored
// mid-fight as the store does.
func TestReplayReproducesFight(t *testing.T) {
	play := func(split bool) string {
		st, d := randomFight(t, RulesetD100, 99)
		var log []string
		for i := 0; st.Game.Mode == ModeCombat && i < 500; i++ {
			if split && i == 20 {
				st.RNG = d.State()
				st = st.Clone()
				var err error
				if d, err = RestoreDice(st.RNG); err != nil {
					t.Fatal(err)
				}
			}
			cb := st.Game.Combat
			if cb.Ending != "" {
				log = append(log, cb.Log...)
				_, _, _ = st.EndCombat("", "")
				break
			}
			randomAction(st, d, cb.Current())
			st.AdvanceTurn(d)
		}
		st.RNG = d.State()
		st.RNG.PCG = nil
		return fmt.Sprint(log, *st.Game.LastCombatResult, st.RNG.Draws, st.Party[0].HP)
	}
	a, b := play(false), play(true)
	if len(a) < 100 || a != b {
		t.Fatalf("replays differ:\n%s\n%s", a, b)
	}
}
