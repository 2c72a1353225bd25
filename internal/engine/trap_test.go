package engine

import (
	"slices"
	"testing"
)

// trappedState is newTestState with a trap on the way back to town:
// an AGI check (difficulty 50 / DC 12) or 1d6 damage.
func trappedState(t *testing.T, ruleset string) *State {
	t.Helper()
	st := newTestState(t)
	st.Config.Ruleset = ruleset
	st.World.Locations["den"].Exits[0].Trap = &Trap{Description: "A snare.", Stat: "agi", Difficulty: 50, DC: 12, Damage: "1d6"}
	return st
}

// TestMovePartySpringsTrap: the engine rolls a trap's check for the one
// who leads, by the ruleset's difficulty, and its damage on a failure.
func TestMovePartySpringsTrap(t *testing.T) {
	cases := []struct {
		name, ruleset, leader string
		dice                  []int
		want                  TrapSprung
		kinds                 []Kind
	}{
		// Brina's AGI 16 is +3: ×5 in d100, as is in d20.
		{"d100 pass", RulesetD100, "c2", []int{35}, TrapSprung{Leader: "Brina", Difficulty: 50, Success: true, Roll: 50}, []Kind{EventWorld, EventDice}},
		{"d100 fail", RulesetD100, "c2", []int{34, 4}, TrapSprung{Leader: "Brina", Difficulty: 50, Roll: 49, Damage: 4, HP: 26, MaxHP: 30}, []Kind{EventWorld, EventDice, EventDice, EventDamage}},
		{"d20 pass", RulesetD20, "c2", []int{9}, TrapSprung{Leader: "Brina", Difficulty: 12, Success: true, Roll: 12}, []Kind{EventWorld, EventDice}},
		{"d20 fail", RulesetD20, "c2", []int{8, 6}, TrapSprung{Leader: "Brina", Difficulty: 12, Roll: 11, Damage: 6, HP: 24, MaxHP: 30}, []Kind{EventWorld, EventDice, EventDice, EventDamage}},
		{"nobody named leads the first", RulesetD100, "", []int{100}, TrapSprung{Leader: "Aldric", Difficulty: 50, Success: true, Roll: 105}, []Kind{EventWorld, EventDice}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := trappedState(t, c.ruleset)
			_, got, evs, err := st.MoveParty(ScriptedDice(c.dice...), c.leader, "town")
			if err != nil {
				t.Fatal(err)
			}
			if st.Game.Location != "town" {
				t.Errorf("party at %s", st.Game.Location)
			}
			c.want.Description, c.want.Stat = "A snare.", "agi"
			if got == nil || *got != c.want {
				t.Errorf("trap %+v, want %+v", got, c.want)
			}
			var kinds []Kind
			for _, e := range evs {
				kinds = append(kinds, e.Kind)
			}
			if !slices.Equal(kinds, c.kinds) {
				t.Errorf("events %v, want %v", kinds, c.kinds)
			}
		})
	}
}

// TestTrapSkipsTheFallen: an unconscious leader is carried; the next one
// on their feet walks first, and the trap can knock them out.
func TestTrapSkipsTheFallen(t *testing.T) {
	st := trappedState(t, RulesetD100)
	st.Party[1].HP = 0
	st.Party[1].Statuses = AddStatus(st.Party[1].Statuses, StatusUnconscious)
	st.Party[0].HP = 2
	_, got, _, err := st.MoveParty(ScriptedDice(1, 6), "c2", "town")
	if err != nil {
		t.Fatal(err)
	}
	if got.Leader != "Aldric" || got.Success || st.Party[0].HP != 0 || !HasStatus(st.Party[0].Statuses, StatusUnconscious) {
		t.Errorf("trap %+v; Aldric %d HP %v", got, st.Party[0].HP, st.Party[0].Statuses)
	}
}

// TestUntrappedMoveRollsNothing: a clear way draws no dice.
func TestUntrappedMoveRollsNothing(t *testing.T) {
	st := newTestState(t)
	d := ScriptedDice()
	_, got, evs, err := st.MoveParty(d, "c1", "town")
	if err != nil || got != nil || len(evs) != 1 {
		t.Fatalf("trap %+v, %d events, err %v", got, len(evs), err)
	}
}
