package hub

import (
	"testing"

	"tavern/internal/engine"
)

// turnOf decides, for every viewer at once, whether a character may act
// now: the rules an act must pass, and nothing the page could get wrong.
func TestTurnOf(t *testing.T) {
	fight := func(mode string, index int, ending engine.Outcome) *engine.State {
		return &engine.State{
			Config: engine.Config{CombatMode: mode},
			Game: engine.Game{Mode: engine.ModeCombat, Combat: &engine.Combat{Round: 2, Index: index, Ending: ending, Order: []engine.Combatant{
				{Entry: engine.BookendEntry, Kind: engine.KindBookend, Name: "DM"},
				{Entry: engine.PCEntry("1"), Kind: engine.KindPC, Name: "Brunhild"},
				{Entry: engine.PCEntry("2"), Kind: engine.KindPC, Name: "Vesna"},
				{Entry: engine.NPCEntry("snikket"), Kind: engine.KindNPC, Name: "Snikket"},
			}}},
		}
	}
	exploring := &engine.State{Config: engine.Config{CombatMode: engine.CombatTactical}, Game: engine.Game{Mode: engine.ModeNarrative}}
	brunhild := &engine.Character{Name: "Brunhild", Seat: "1", HP: 30, MaxHP: 45}
	vesna := &engine.Character{Name: "Vesna", Seat: "2", HP: 34, MaxHP: 34}
	unconscious := &engine.Character{Name: "Vesna", Seat: "2", HP: 0, MaxHP: 34, Statuses: []string{engine.StatusUnconscious}}
	for _, tc := range []struct {
		name string
		st   *engine.State
		c    *engine.Character
		want string
	}{
		{"exploring", exploring, brunhild, TurnFree},
		{"turn-based, my turn", fight(engine.CombatTactical, 2, ""), vesna, TurnYours},
		{"turn-based, another PC's turn", fight(engine.CombatTactical, 2, ""), brunhild, TurnWaiting},
		{"turn-based, a foe's turn", fight(engine.CombatTactical, 3, ""), vesna, TurnWaiting},
		{"turn-based, my turn but the fight is ending", fight(engine.CombatTactical, 2, engine.OutcomePlayerWin), vesna, TurnWaiting},
		{"free fight, anyone", fight(engine.CombatNarrative, 3, ""), brunhild, TurnFree},
		{"down, exploring", exploring, unconscious, TurnDown},
		{"down, on my turn", fight(engine.CombatTactical, 2, ""), unconscious, TurnDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := turnOf(tc.st, tc.c); got != tc.want {
				t.Errorf("turnOf = %q, want %q", got, tc.want)
			}
		})
	}
}
