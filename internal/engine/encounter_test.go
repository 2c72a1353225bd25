package engine

import (
	"fmt"
	"slices"
	"testing"
)

// A party of four meets two copies of the weakest unnamed foe, made once,
// and foes with more HP; a second fight there finds the same copies.
func TestStrongPartyBringsOutReinforcementsOnce(t *testing.T) {
	st := NewState(Config{Ruleset: RulesetD100}, testAdventure(), testCatalogue(), 1)
	d := NewDice(1)
	for i := range 4 {
		seat := fmt.Sprint(i + 1)
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, NewCharacterSpec{Name: "Hero " + seat, Class: "warrior"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(NewDice(1), "", "den"); err != nil {
		t.Fatal(err)
	}
	foes := func() []string {
		var out []string
		for _, e := range st.Game.Combat.Order {
			if e.Kind == KindNPC {
				out = append(out, e.Name)
			}
		}
		slices.Sort(out) // the initiative is rolled again in each fight
		return out
	}
	if _, _, err := st.StartCombat(d, []string{"boss"}); err != nil {
		t.Fatal(err)
	}
	first := fmt.Sprint(foes())
	if got := len(foes()); got != 4 {
		t.Fatalf("foes %v; want Boss, Grunt and two copies of Grunt", foes())
	}
	second := st.World.NPCs["grunt-2"]
	if second == nil || second.Name != "Second Grunt" || second.Gold != 0 || second.MaxHP != 17 || st.World.NPCs["grunt"].MaxHP != 17 {
		t.Fatalf("the copy %+v; Grunt's max HP %d (want 12 × 1.4 = 17)", second, st.World.NPCs["grunt"].MaxHP)
	}
	if _, _, err := st.EndCombat(OutcomeForcedEnd, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"boss"}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(foes()); got != first || len(st.World.NPCs) != 5 || st.World.NPCs["grunt-2"].MaxHP != 17 {
		t.Errorf("second fight: foes %s (first %s), %d NPCs, copy max HP %d", got, first, len(st.World.NPCs), st.World.NPCs["grunt-2"].MaxHP)
	}
}
