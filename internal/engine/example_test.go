package engine_test

import (
	"encoding/json"
	"fmt"

	"tavern/internal/engine"
)

// A fight from start to first blood: a table's state is built from an
// adventure and a catalogue, the dice are seeded (the hub seeds them per
// table and persists their position), and every rule returns the events
// that players see. The hub numbers, stores and broadcasts them.
func Example() {
	cat := &engine.Catalogue{
		Weapons: []engine.Weapon{{ID: "sword", Name: "Sword", Damage: 10, Dice: "1d8"}, {ID: "knife", Name: "Knife", Damage: 6, Dice: "1d4"}},
		Armours: []engine.Armour{{ID: "mail", Name: "Mail", Absorption: 4, AC: 16}},
		Classes: []engine.Class{{ID: "warrior", Name: "Warrior", HP: 40, HPD20: 12, Weapon: "sword", Armour: "mail",
			Stats: engine.Stats{STR: 16, AGI: 12, CON: 14, INT: 10, WIS: 10, CHA: 10}}},
	}
	adv := &engine.Adventure{ID: "mill", Name: "The Mill", Start: "square",
		Locations: []engine.Location{
			{ID: "square", Name: "The Square", Exits: []engine.Exit{{To: "mill", Name: "the river path"}}},
			{ID: "mill", Name: "The Old Mill", Exits: []engine.Exit{{To: "square", Name: "back"}}},
		},
		NPCs: []engine.NPC{{ID: "snikket", Name: "Snikket", Kind: "goblin", Location: "mill", Hostile: true,
			Level: 1, HP: 12, Stats: engine.Stats{AGI: 10}, Weapon: "knife"}},
	}
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100}, adv, cat, 2)
	dice := engine.NewDice(2)

	var evs []engine.Event
	if _, err := st.AddCharacter(dice, "c1", "1", "p1", engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		fmt.Println(err)
		return
	}
	_, _, moved, err := st.MoveParty(dice, "c1", "mill")
	if err != nil {
		fmt.Println(err)
		return
	}
	evs = append(evs, moved...)
	cb, started, err := st.StartCombat(dice, []string{"snikket"})
	if err != nil {
		fmt.Println(err)
		return
	}
	evs = append(evs, started...)
	evs = append(evs, engine.CombatStartedEvent(cb))
	// Play turns until Aldric's comes round, then he attacks.
	for st.Game.Combat.Current().Entry != engine.PCEntry("1") {
		_, turn := st.AdvanceTurn(dice)
		evs = append(evs, turn...)
	}
	_, hit, err := st.Attack(dice, "pc:1", "Snikket")
	if err != nil {
		fmt.Println(err)
		return
	}
	evs = append(evs, hit...)

	for _, e := range evs {
		data, _ := json.Marshal(e.Data)
		fmt.Println(e.Kind, string(data))
	}
	// Readers switch on the payload's type.
	for _, e := range evs {
		switch d := e.Data.(type) {
		case engine.DiceData:
			if d.Outcome != "" {
				fmt.Printf("%s rolls %d against %d: %s\n", d.Roller, d.Total, *d.Against, d.Outcome)
			}
		case engine.DamageData:
			fmt.Printf("%s is down to %d of %d HP\n", d.Target, d.HP, d.MaxHP)
		}
	}
	// Output:
	// world {"location":"mill","name":"The Old Mill"}
	// dice {"modifier":1,"notation":"1d100+1","purpose":"initiative","roller":"Aldric","rolls":[66],"total":67}
	// dice {"modifier":0,"notation":"1d100","purpose":"initiative","roller":"Snikket","rolls":[90],"total":90}
	// mode {"mode":"combat"}
	// combat_started {"combat_id":"combat-1","initiative":[{"id":"dm","kind":"bookend","name":"DM"},{"id":"dm:snikket","initiative":90,"kind":"npc","name":"Snikket"},{"id":"pc:1","initiative":67,"kind":"pc","name":"Aldric"}],"location":"mill"}
	// dice {"against":29,"modifier":1,"notation":"1d100+1","outcome":"hit","purpose":"attack on Snikket","roller":"Aldric","rolls":[31],"total":32}
	// dice {"modifier":0,"notation":"1d100","purpose":"defence against Aldric","roller":"Snikket","rolls":[29],"total":29}
	// damage {"amount":10,"hp":0,"max_hp":6,"target":"Snikket"}
	// status {"added":["dead"],"target":"Snikket"}
	// Aldric rolls 32 against 29: hit
	// Snikket is down to 0 of 6 HP
}
