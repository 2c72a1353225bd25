package engine_test

import (
	"encoding/json"
	"fmt"

	"tavern/internal/engine"
)

// A warrior's ability in a fight: the engine rolls it, spends a use and
// says what is left; used again, it is refused with what is ready
// instead. Out of the fight, a short rest gives the use back.
func ExampleState_UseAbility() {
	cat := &engine.Catalogue{
		Weapons: []engine.Weapon{{ID: "sword", Name: "Sword", Damage: 10, Dice: "1d8"}, {ID: "knife", Name: "Knife", Damage: 6, Dice: "1d4"}},
		Armours: []engine.Armour{{ID: "mail", Name: "Mail", Absorption: 4, AC: 16}},
		Classes: []engine.Class{{ID: "warrior", Name: "Warrior", HP: 40, HPD20: 12, Weapon: "sword", Armour: "mail",
			Stats: engine.Stats{STR: 16, AGI: 12, CON: 14, INT: 10, WIS: 10, CHA: 10}}},
	}
	adv := &engine.Adventure{ID: "mill", Name: "The Mill", Start: "mill",
		Locations: []engine.Location{{ID: "mill", Name: "The Old Mill"}, {ID: "square", Name: "The Square"}},
		NPCs: []engine.NPC{{ID: "snikket", Name: "Snikket", Kind: "goblin", Location: "mill", Hostile: true,
			Level: 1, HP: 12, HPD20: 7, Stats: engine.Stats{AGI: 10}, Weapon: "knife"}},
	}
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD20}, adv, cat, 2)
	dice := engine.NewDice(2)
	aldric, _ := st.AddCharacter(dice, "c1", "1", "p1", engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"})
	if _, _, err := st.StartCombat(dice, []string{"snikket"}); err != nil {
		fmt.Println(err)
		return
	}
	_ = engine.DiceEvents(dice) // the initiative rolls
	aldric.HP = 3

	out, evs, err := st.UseAbility(dice, "Aldric", "second_wind", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range evs {
		data, _ := json.Marshal(e.Data)
		fmt.Println(e.Kind, string(data))
	}
	fmt.Println(out.Summary)
	_, _, err = st.UseAbility(dice, "Aldric", "second_wind", "")
	fmt.Println(err)

	if _, _, err := st.EndCombat(engine.OutcomeForcedEnd, ""); err != nil {
		fmt.Println(err)
		return
	}
	st.World.NPCs["snikket"].Location = "square" // he slinks away
	if _, _, err := st.Rest(dice, engine.RestShort); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.CharacterAbilities(aldric)[0].Uses, "use of", st.CharacterAbilities(aldric)[0].Name)
	// Output:
	// ability {"ability":"second_wind","actor":"Aldric","target":"Aldric","uses_left":0}
	// dice {"modifier":1,"notation":"1d10+1","purpose":"Second wind on Aldric","roller":"Aldric","rolls":[4],"total":5}
	// heal {"amount":5,"hp":8,"max_hp":12,"target":"Aldric"}
	// Aldric recovers 5 HP (8/12)
	// Aldric has no use of Second wind left (a short rest out of a fight restores it); ready: Power attack (power_attack, 2/2), Shield wall (shield_wall, 1/1). Or attack, defend or use an item.
	// 1 use of Second wind
}
