package db

import (
	"context"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// TestActionByClientID: an action is found by (table, player, client id)
// with its state, open, resolved or abandoned; another player's, another
// table's or an unknown id is not.
func TestActionByClientID(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	for _, p := range []engine.PendingAction{
		{ID: "a", PlayerID: "p1", ClientID: "k1", CreatedAt: t0},
		{ID: "b", PlayerID: "p1", ClientID: "k2", CreatedAt: t0.Add(time.Second)},
		{ID: "c", PlayerID: "p1", ClientID: "k3", CreatedAt: t0.Add(2 * time.Second)},
	} {
		if err := d.Commit(ctx, store.Commit{TableID: "t1", AddPending: &p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Resolve: []string{"a"}, Abandon: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, player, client string
		found                 bool
		id, state             string
	}{
		{"t1", "p1", "k1", true, "a", store.ActionResolved},
		{"t1", "p1", "k2", true, "b", store.ActionAbandoned},
		{"t1", "p1", "k3", true, "c", store.ActionPending},
		{"t1", "p2", "k1", false, "", ""},
		{"t2", "p1", "k1", false, "", ""},
		{"t1", "p1", "k9", false, "", ""},
	} {
		a, found, err := d.ActionByClientID(ctx, tc.table, tc.player, tc.client)
		if err != nil {
			t.Fatal(err)
		}
		if found != tc.found || a.ActionID != tc.id || a.State != tc.state {
			t.Errorf("%s/%s/%s = %+v %v, want %s %s %v", tc.table, tc.player, tc.client, a, found, tc.id, tc.state, tc.found)
		}
	}
}
