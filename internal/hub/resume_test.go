package hub_test

import (
	"context"
	"testing"
)

// A websocket resuming on a long table (600 events, stored while the
// server was down) is replayed from the store outside the table goroutine
// when within the window, in order and without a gap before the live
// events; further behind it gets a snapshot.
func TestWebsocketResumeOnLongTable(t *testing.T) {
	e := newEnv(t, 1)
	const n = 600
	id := e.longTable(n)

	c := e.dial(id, "spectator", "", 150)
	if w := c.next(); w.Type != "welcome" || w.Seq != n {
		t.Fatalf("first frame %s, want welcome at seq %d", w.Raw, n)
	}
	p, _ := e.player("Ann")
	e.sit(id, p, "Ann", "") // a live event while (or after) the replay is read
	for want := int64(151); want <= n+1; want++ {
		f := c.next()
		if f.Type != "event" || f.Seq != want {
			t.Fatalf("frame %s, want event %d", f.Raw, want)
		}
	}

	// Ann's arrival (narrated after the seat, sit waits for it) follows;
	// the snapshot is of the table as it is then.
	after, err := e.store.Events(context.Background(), id, n, 100)
	if err != nil || len(after) < 2 {
		t.Fatalf("events after the replay: %v %v", after, err)
	}
	last := after[len(after)-1].Seq
	far := e.dial(id, "spectator", "", 10)
	far.next() // welcome
	if f := far.next(); f.Type != "snapshot" || f.Seq != last {
		t.Fatalf("frame %s, want a snapshot at %d", f.Raw, last)
	}
}
