package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestErasePlayerFrom: the player's own seat, chat and action events lose
// their name (and a chat its text); anyone else's and other kinds stay.
func TestErasePlayerFrom(t *testing.T) {
	ann, bob := Player{ID: "p1", Name: "Ann"}, Player{ID: "p2", Name: "Bob"}
	c := &Character{ID: "c1", Name: "Bram"}
	for _, tc := range []struct {
		name string
		e    Event
		ok   bool
	}{
		{"chat", ChatEvent(ann, "zebra xylophone"), true},
		{"joined", PlayerJoinedEvent(ann, "1", "player", c), true},
		{"left", PlayerLeftEvent(ann, "1", "player"), true},
		{"action", NewEvent(ActionData{ActionID: "a1", CharacterID: "c1", Name: "Ann", PlayerID: "p1", Text: "look around"}), true},
		{"someone else's chat", ChatEvent(bob, "zebra xylophone"), false},
		{"narration", NarrationEvent(AgentNarrative, "Ann looks around.", nil, "a1"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.e.Seq = 7
			got, ok := ErasePlayerFrom(tc.e, "p1", "deleted player")
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			b, _ := json.Marshal(got)
			if !ok {
				if want, _ := json.Marshal(tc.e); string(b) != string(want) {
					t.Errorf("changed: %s, was %s", b, want)
				}
				return
			}
			if got.Seq != 7 || got.Kind != tc.e.Kind || strings.Contains(string(b), `"Ann"`) || strings.Contains(string(b), "zebra") ||
				!strings.Contains(string(b), "deleted player") {
				t.Errorf("erased %s", b)
			}
		})
	}
}
