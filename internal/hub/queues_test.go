package hub

import (
	"strings"
	"testing"
)

// The loop serves the system first, systemBurst commands in a row at
// most while a player's command waits, and then that player's.
func TestLoopServesBothQueues(t *testing.T) {
	for _, tc := range []struct {
		name            string
		system, players int
		want            string
	}{
		{name: "players only", players: 3, want: "ppp"},
		{name: "system only", system: 3, want: "sss"},
		{name: "system first", system: 2, players: 2, want: "sspp"},
		{name: "a long system run lets players in", system: 2*systemBurst + 4, players: 3,
			want: strings.Repeat("s", systemBurst) + "p" + strings.Repeat("s", systemBurst) + "p" + "ssss" + "p"},
		{name: "a long player run does not hold up the system", system: 1, players: 2 * systemBurst, want: "s" + strings.Repeat("p", 2*systemBurst)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{})
			defer h.cancel()
			tb := &table{h: h, players: make(chan func(), queueSize), system: make(chan func(), queueSize), flight: flight{answered: make(chan struct{}, 1)}}
			var got strings.Builder
			for range tc.system {
				tb.system <- func() { got.WriteByte('s') }
			}
			for range tc.players {
				tb.players <- func() { got.WriteByte('p') }
			}
			burst := 0
			for range tc.system + tc.players {
				if !tb.next(&burst) {
					t.Fatal("the table stopped")
				}
			}
			if got.String() != tc.want {
				t.Errorf("order = %s, want %s", got.String(), tc.want)
			}
		})
	}
}

// Once the hub closes the loop stops, whatever is queued.
func TestLoopStopsWhenTheHubCloses(t *testing.T) {
	h := New(Config{})
	tb := &table{h: h, players: make(chan func(), 1), system: make(chan func(), 1), flight: flight{answered: make(chan struct{}, 1)}}
	ran := false
	tb.system <- func() { ran = true }
	h.cancel()
	burst := 0
	if tb.next(&burst) {
		t.Error("the table went on after the hub closed")
	}
	if ran {
		t.Error("a command ran after the hub closed")
	}
}
