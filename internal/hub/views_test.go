package hub_test

import (
	"context"
	"slices"
	"testing"

	"tavern/internal/hub"
)

// The snapshot says who is online (the seats with a live player
// connection) and counts spectators; a seated player without a
// connection is not online.
func TestSnapshotOnlineAndSpectators(t *testing.T) {
	e := newEnv(t, 1)
	tid := e.table(hub.TableSpec{})
	ann, tok := e.player("Ann")
	bob, _ := e.player("Bob")
	a := e.sit(tid, ann, "Aldric", "warrior")
	e.sit(tid, bob, "Brina", "rogue")
	c := e.dial(tid, "player", tok, -1)
	c.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	s := e.dial(tid, "spectator", "", -1)
	s.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Online, []string{a.Seat}) || snap.Table.Spectators != 1 {
		t.Errorf("online %v (want [%s]), spectators %d (want 1)", snap.Online, a.Seat, snap.Table.Spectators)
	}
}
