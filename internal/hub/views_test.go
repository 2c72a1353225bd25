package hub_test

import (
	"context"
	"encoding/json"
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

// Each party member in the snapshot says whether it may act now (can_act,
// turn), so the page obeys the server instead of re-deriving the rules.
func TestSnapshotCanAct(t *testing.T) {
	e := newEnv(t, 1)
	tid := e.table(hub.TableSpec{})
	ann, tok := e.player("Ann")
	e.sit(tid, ann, "Aldric", "warrior")
	c := e.dial(tid, "player", tok, -1)
	f := c.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	var sent struct {
		Party []struct {
			Name   string `json:"name"`
			CanAct *bool  `json:"can_act"`
			Turn   string `json:"turn"`
		} `json:"party"`
	}
	if err := json.Unmarshal(f.Raw, &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Party) != 1 || sent.Party[0].CanAct == nil || !*sent.Party[0].CanAct || sent.Party[0].Turn != hub.TurnFree {
		t.Errorf("the snapshot frame does not say Aldric may act while exploring: %s", f.Raw)
	}
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	if p := snap.Party[0]; !p.CanAct || p.Turn != hub.TurnFree {
		t.Errorf("exploring: can_act %v, turn %q; want true, %q", p.CanAct, p.Turn, hub.TurnFree)
	}
}
