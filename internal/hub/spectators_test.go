package hub_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// Fifty spectators come and go: the event log does not grow by one event
// (player_joined and player_left are for seats only, PROTOCOL.md "Events"),
// while the snapshot and a state frame count them live.
func TestSpectatorsCountedNotLogged(t *testing.T) {
	const watchers = 50
	e := newEnv(t, 1)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(id, p, "Ann", "")
	ctx := context.Background()

	before := lastSeq(t, e, id)
	specs := make([]*wsClient, watchers)
	for i := range specs {
		specs[i] = e.dial(id, "spectator", "", -1)
	}
	for _, s := range specs {
		if w := s.next(); w.Type != "welcome" || dataOfYou(w)["role"] != "spectator" {
			t.Fatalf("first frame %s, want a spectator's welcome", w.Raw)
		}
		s.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	}
	// Each spectator is registered in the same table command that sent
	// its snapshot, so this call, queued after the last one, sees all.
	snap, err := e.hub.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Table.Spectators != watchers {
		t.Errorf("snapshot counts %d spectators, want %d", snap.Table.Spectators, watchers)
	}

	// A client resuming at the last seq with ?state=1 gets a state frame
	// of the live table; it does not count itself (it is not in yet).
	sc := e.dialPush(id, "player", tok, snap.Seq)
	if w := sc.next(); w.Type != "welcome" {
		t.Fatalf("first frame %s, want welcome", w.Raw)
	}
	st := sc.next()
	if st.Type != "state" {
		t.Fatalf("frame %s, want a state frame", st.Raw)
	}
	var state hub.Snapshot
	if err := json.Unmarshal(st.Raw, &state); err != nil {
		t.Fatal(err)
	}
	if state.Table.Spectators != watchers {
		t.Errorf("state frame counts %d spectators, want %d", state.Table.Spectators, watchers)
	}

	// Half of them leave; the count follows.
	for _, s := range specs[:watchers/2] {
		s.conn.Close(websocket.StatusNormalClosure, "")
		s.closeStatus()
	}
	if n := awaitSpectators(t, e, id, watchers/2); n != watchers/2 {
		t.Errorf("snapshot counts %d spectators after %d left, want %d", n, watchers/2, watchers/2)
	}

	if after := lastSeq(t, e, id); after != before {
		t.Errorf("the log went from seq %d to %d while only spectators came and went", before, after)
	}
	evs, err := e.hub.Events(ctx, id, 0, hub.MaxEventsPage)
	if err != nil {
		t.Fatal(err)
	}
	joined := 0
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case engine.PlayerJoinedData:
			joined++
			if d.Role != "player" {
				t.Errorf("player_joined %d has role %q, want player", ev.Seq, d.Role)
			}
		case engine.PlayerLeftData:
			t.Errorf("player_left %d (role %q) though no seat was left", ev.Seq, d.Role)
		}
	}
	if joined != 1 {
		t.Errorf("%d player_joined events, want 1 (Ann's seat)", joined)
	}
}

func dataOfYou(f frame) map[string]any {
	var w struct {
		You map[string]any `json:"you"`
	}
	_ = json.Unmarshal(f.Raw, &w)
	return w.You
}

func lastSeq(t *testing.T, e *env, id string) int64 {
	t.Helper()
	snap, err := e.hub.Snapshot(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Seq
}

// awaitSpectators returns the snapshot's spectator count once it is want,
// or the last count seen: a closed socket leaves its table asynchronously.
func awaitSpectators(t *testing.T, e *env, id string, want int) int {
	t.Helper()
	got := -1
	for range 500 {
		snap, err := e.hub.Snapshot(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got = snap.Table.Spectators; got == want {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	return got
}

// A spectator's arrival and departure reach the pages already open, and
// the newcomer's own page counts itself: the state frames carry the count.
func TestSpectatorCountReachesOpenPages(t *testing.T) {
	e := newEnv(t, 1)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(id, p, "Ann", "")
	spectators := func(c *pushClient, want int) {
		t.Helper()
		for {
			f := c.next()
			if f.Type != "state" {
				continue
			}
			var s hub.Snapshot
			if err := json.Unmarshal(f.Raw, &s); err != nil {
				t.Fatal(err)
			}
			if s.Table.Spectators == want {
				return
			}
		}
	}
	pc := e.dialPush(id, "player", tok, -1)
	spectators(pc, 0)
	sc := e.dialPush(id, "spectator", "", -1)
	spectators(sc, 1)
	spectators(pc, 1)
	sc.conn.Close(websocket.StatusNormalClosure, "")
	spectators(pc, 0)
}
