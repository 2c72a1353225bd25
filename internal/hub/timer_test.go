package hub

import (
	"encoding/json"
	"testing"
	"time"

	"tavern/internal/engine"
)

// TestStampDeadlines: a PC's turn event gets the timer's deadline whether it
// was built in memory or went through JSON (as an event reloaded from the
// store holds maps, not Go structs); NPC and resolution turns get none.
func TestStampDeadlines(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tb := &table{h: &Hub{cfg: Config{Now: func() time.Time { return now }}},
		meta: engine.Table{Config: engine.Config{CombatMode: engine.CombatTactical, TurnTimeoutS: 30}}}
	roundTrip := func(e engine.Event) engine.Event {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var out engine.Event
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	pc := engine.TurnEvent(1, 1, engine.InitiativeEntry{ID: "pc:1", Name: "Brunhild", Kind: engine.KindPC})
	npc := engine.TurnEvent(1, 2, engine.InitiativeEntry{ID: "dm:snikket", Name: "Snikket", Kind: engine.KindNPC})
	resolution := engine.ResolutionTurnEvent(1, 0, engine.OutcomePlayerWin)
	const want = "2025-03-01T12:00:30Z"
	for _, tc := range []struct {
		name string
		ev   engine.Event
		want string
	}{
		{"PC turn, built", pc, want},
		{"PC turn, through JSON", roundTrip(pc), want},
		{"NPC turn, built", npc, ""},
		{"NPC turn, through JSON", roundTrip(npc), ""},
		{"resolution turn, built", resolution, ""},
		{"resolution turn, through JSON", roundTrip(resolution), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := []engine.Event{tc.ev}
			tb.stampDeadlines(evs)
			if got := evs[0].Data.(engine.TurnData).Deadline; got != tc.want {
				t.Errorf("deadline = %q, want %q", got, tc.want)
			}
			if tc.ev.Data.(engine.TurnData).Deadline != "" {
				t.Error("the event handed in was changed")
			}
		})
	}
}
