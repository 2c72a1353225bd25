package engine

import "testing"

// TestReinforcementsAreToldByOrigin: a copy is known by the id and name
// made from its original, not by a "Second" in a name; it keeps its
// original's undead nature.
func TestReinforcementsAreToldByOrigin(t *testing.T) {
	adv := testAdventure()
	adv.NPCs[1].Undead = true // Grunt
	adv.NPCs = append(adv.NPCs, NPC{ID: "mate", Name: "Second Mate", Kind: "pirate", Location: "den", Hostile: true, Level: 1, HP: 5, Stats: Stats{AGI: 10}})
	st := NewState(Config{Ruleset: RulesetD100}, adv, testCatalogue(), 1)
	got := st.reinforce([]string{"boss", "grunt", "mate"}, map[string]bool{"boss": true}, 1)
	if len(got) != 1 || got[0] != "mate-2" {
		t.Fatalf("copies %v; want one of Second Mate, the weakest, an adventure NPC and no copy", got)
	}
	st = NewState(Config{Ruleset: RulesetD100}, adv, testCatalogue(), 1)
	got = st.reinforce([]string{"boss", "grunt"}, map[string]bool{"boss": true}, 2)
	if len(got) != 2 || got[0] != "grunt-2" || got[1] != "grunt-3" {
		t.Fatalf("copies %v", got)
	}
	for _, id := range got {
		if n := st.World.NPCs[id]; !st.isReinforcement(n) || !st.undead(id) {
			t.Errorf("%s (%s): copy %v, undead %v", id, n.Name, st.isReinforcement(n), st.undead(id))
		}
	}
	for _, id := range []string{"grunt", "mate", "boss"} {
		if st.isReinforcement(st.World.NPCs[id]) {
			t.Errorf("%s is taken for a copy", id)
		}
	}
}
