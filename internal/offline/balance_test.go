package offline_test

import (
	"slices"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

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
