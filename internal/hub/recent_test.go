package hub

import (
	"context"
	"testing"

	"tavern/internal/engine"
)

// A snapshot's recent events are the last recentEvents published, in
// order, however they were published (one at a time, or many at once).
func TestSnapshotRecentIsTheLastEvents(t *testing.T) {
	tb, _ := socketTable(t)
	ctx := context.Background()
	for _, n := range []int{1, 7, recentEvents + 3, 1, 2 * recentEvents, 5} {
		var recent []engine.Event
		if err := tb.call(ctx, func() error {
			evs := make([]engine.Event, n)
			for i := range evs {
				evs[i] = engine.SystemEvent("test", "line")
			}
			tb.number(evs, "")
			tb.publishNow(t, evs)
			recent = tb.snapshot().Recent
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		last := tb.seq
		if want := min(int(last), recentEvents); len(recent) != want {
			t.Fatalf("after %d more: %d recent events, want %d", n, len(recent), want)
		}
		for i, e := range recent {
			if want := last - int64(len(recent)-1-i); e.Seq != want {
				t.Fatalf("after %d more: recent[%d] is seq %d, want %d", n, i, e.Seq, want)
			}
		}
	}
}
