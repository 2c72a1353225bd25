package engine

import "testing"

// testCatalogue and testAdventure are small, explicit fixtures so rule
// tests do not depend on the built-in YAML.
func testCatalogue() *Catalogue {
	return &Catalogue{
		Weapons: []Weapon{
			{ID: "sword", Name: "Sword", Damage: 10, Dice: "1d8"},
			{ID: "knife", Name: "Knife", Damage: 6, Dice: "1d4"},
			{ID: "bow", Name: "Bow", Damage: 8, Dice: "1d6", Ranged: true},
		},
		Armours:     []Armour{{ID: "mail", Name: "Mail", Absorption: 4, AC: 16}, {ID: "hide", Name: "Hide", Absorption: 2, AC: 12}},
		Consumables: []Consumable{{ID: "potion", Name: "Potion", Heal: "2d10+5", HealD20: "2d4+2"}},
		Classes: []Class{
			{ID: "warrior", Name: "Warrior", Stats: Stats{STR: 16, AGI: 12, CON: 14, INT: 10, WIS: 10, CHA: 10}, HP: 40, HPD20: 12, Weapon: "sword", Armour: "mail", Items: []string{"potion"}, Gold: 10},
			{ID: "rogue", Name: "Rogue", Stats: Stats{STR: 10, AGI: 16, CON: 12, INT: 12, WIS: 10, CHA: 12}, HP: 30, HPD20: 9, Weapon: "knife", Armour: "hide", Gold: 20},
		},
	}
}

func testAdventure() *Adventure {
	return &Adventure{
		ID: "test", Name: "Test", Start: "town",
		Locations: []Location{
			{ID: "town", Name: "Town", Exits: []Exit{{To: "den", Name: "the den"}}},
			{ID: "den", Name: "Den", Exits: []Exit{{To: "town", Name: "back"}}},
		},
		NPCs: []NPC{
			{ID: "boss", Name: "Boss", Kind: "goblin", Location: "den", Hostile: true, Level: 2, HP: 20, Gold: 10, Stats: Stats{AGI: 14}, Weapon: "knife", Armour: "hide", Tactics: "focuses the weakest"},
			{ID: "grunt", Name: "Grunt", Kind: "goblin", Location: "den", Hostile: true, Level: 1, HP: 12, Gold: 3, Stats: Stats{AGI: 10}, Weapon: "knife"},
			{ID: "baker", Name: "Baker", Kind: "baker", Location: "town", HP: 10, Stats: Stats{AGI: 10}},
		},
		Templates: []ItemTemplate{{ID: "crown", Name: "Crown"}},
		Items: []Item{
			{ID: "crown-1", Template: "crown", Name: "Crown", OwnerType: OwnerNPC, OwnerID: "boss"},
			{ID: "rope-1", Template: "crown", Name: "Rope", OwnerType: OwnerLocation, OwnerID: "town"},
		},
	}
}

// newTestState returns a d100 state with a warrior at seat 1 and a rogue at
// seat 2, in the goblins' den.
func newTestState(t testing.TB) *State {
	t.Helper()
	st := NewState(Config{Ruleset: RulesetD100}, testAdventure(), testCatalogue(), 42)
	d := NewDice(1)
	if _, err := st.AddCharacter(d, "c1", "1", "p1", NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddCharacter(d, "c2", "2", "p2", NewCharacterSpec{Name: "Brina", Class: "rogue"}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.MoveParty(NewDice(1), "", "den"); err != nil {
		t.Fatal(err)
	}
	return st
}
