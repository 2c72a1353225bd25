package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/engine"
)

// partyOf returns a d100 state of the default adventure with n level-1
// warriors: a party of power n.
func partyOf(t *testing.T, ruleset string, n int) *engine.State {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: ruleset}, adv, lib.Catalogue, 1)
	d := engine.NewDice(1)
	for i := range n {
		seat := fmt.Sprint(i + 1)
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: "Hero " + seat, Class: "warrior"}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// The adventure's own NPCs, written for the party it expects (three
// level-1 characters), fit the budget of a created NPC at such a table:
// a created NPC can be made as strong as the adventure's, and no more.
func TestAdventureNPCsFitTheBudget(t *testing.T) {
	for _, ruleset := range []string{engine.RulesetD100, engine.RulesetD20} {
		st := partyOf(t, ruleset, 3)
		for id, n := range st.World.NPCs {
			if ruleset == engine.RulesetD20 && n.HPD20 == 0 {
				continue // not written for a d20 fight: it keeps its d100 HP
			}
			spec := engine.NewNPCSpec{Name: n.Name, Kind: n.Kind, Location: n.Location, Hostile: n.Hostile, Behavior: n.Behavior,
				Disposition: n.Disposition, Faction: n.Faction, Personality: n.Personality, Tactics: n.Tactics, Secret: n.Secret,
				Level: n.Level, HP: n.MaxHP, Stats: n.Stats, Weapon: n.Weapon, Armour: n.Armour}
			if _, _, err := st.CreateNPC("copy-"+id, spec); err != nil {
				t.Errorf("%s: %s as a created NPC: %v", ruleset, id, err)
			}
		}
	}
}

func TestCreateNPCTakesTheFullProfile(t *testing.T) {
	st := partyOf(t, engine.RulesetD100, 2)
	spec := engine.NewNPCSpec{Name: "Vesna", Kind: "bandit", Hostile: true, Disposition: -40, Faction: "Red Hands",
		Personality: "cold, precise", Tactics: "targets the weakest, flees when alone", Secret: "She is Maren's daughter.",
		Level: 2, HP: 24, Stats: engine.Stats{STR: 12, AGI: 16}, Weapon: "shortbow", Armour: "leather"}
	n, evs, err := st.CreateNPC("npc-1", spec)
	if err != nil {
		t.Fatal(err)
	}
	want := engine.NPC{ID: "npc-1", Name: "Vesna", Kind: "bandit", Location: st.Game.Location, Hostile: true, Behavior: "hostile",
		Disposition: -40, Faction: "Red Hands", Personality: "cold, precise", Tactics: "targets the weakest, flees when alone",
		Secret: "She is Maren's daughter.", Level: 2, HP: 24, MaxHP: 24,
		Stats: engine.Stats{STR: 12, AGI: 16, CON: 10, INT: 10, WIS: 10, CHA: 10}, Weapon: "shortbow", Armour: "leather"}
	if n.Statuses == nil || len(n.Statuses) != 0 {
		t.Errorf("statuses %#v, want none", n.Statuses)
	}
	got := *n
	got.Statuses = nil
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("NPC\n%+v\nwant\n%+v", got, want)
	}
	if st.World.NPCs["npc-1"] != n {
		t.Error("the NPC is not in the world")
	}
	for _, ev := range evs {
		if strings.Contains(fmt.Sprintf("%+v", ev.Data), "daughter") {
			t.Errorf("the secret is in the event %+v", ev)
		}
	}
}

func TestCreateNPCRefusesWhatTheBudgetDoesNotAllow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		power int
		spec  engine.NewNPCSpec
		want  string
	}{
		{"too high a level for a lone hero", 1, engine.NewNPCSpec{Level: 3},
			"A new NPC here has level 1 to 2: the party's power is 1, and a fight holds at most power+1 levels of foes (never above 3)."},
		{"above level 3 for any party", 4, engine.NewNPCSpec{Level: 4},
			"A new NPC here has level 1 to 3: the party's power is 4, and a fight holds at most power+1 levels of foes (never above 3)."},
		{"too many HP", 3, engine.NewNPCSpec{Level: 2, HP: 31}, "A level-2 NPC has 1 to 30 HP; ask for 30 or fewer."},
		{"too strong a stat", 3, engine.NewNPCSpec{Level: 1, Stats: engine.Stats{STR: 18}}, "A level-1 NPC's stats are 3 to 15; str 18 is out of range."},
		{"too heavy an armour", 3, engine.NewNPCSpec{Level: 1, Armour: "chain-mail"}, "Chain mail is too strong for a level-1 NPC; it may wear robes, leather, hide."},
		{"an unknown armour", 3, engine.NewNPCSpec{Armour: "plate"}, `Unknown armour "plate": use a catalogue armour id.`},
		{"a disposition out of range", 3, engine.NewNPCSpec{Disposition: 150}, "Disposition is -100 (hates the party) to 100 (loves it)."},
		{"too long a secret", 3, engine.NewNPCSpec{Secret: strings.Repeat("x", 301)}, "The secret must be at most 300 characters."},
		{"an invisible character in the name", 3, engine.NewNPCSpec{Name: "Bru\u200bte"}, "The NPC's name must not contain invisible characters."},
		{"no name", 3, engine.NewNPCSpec{Name: " "}, "The NPC's name must not be empty."},
		{"an override in the personality", 3, engine.NewNPCSpec{Personality: "Kind \u202eliveyllaer"}, "The personality must not contain text-direction overrides."},
		{"a zero-width-only tactics", 3, engine.NewNPCSpec{Tactics: "\u200b"}, "The tactics must contain a visible character."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := partyOf(t, engine.RulesetD100, tc.power)
			if tc.spec.Name == "" {
				tc.spec.Name = "Brute"
			}
			_, _, err := st.CreateNPC("npc-1", tc.spec)
			var e *engine.Error
			if !errors.As(err, &e) || e.Code != engine.EINVALID || e.Message != tc.want {
				t.Errorf("error %v, want EINVALID %q", err, tc.want)
			}
			if st.World.NPCs["npc-1"] != nil {
				t.Error("a refused NPC was created")
			}
		})
	}
}
