package hub

import (
	"context"
	"testing"
	"time"

	"tavern/internal/engine"
)

// TestAdminTablesPastABlockedTable: the operator's list does not wait on a
// table whose goroutine is stuck beyond that table's deadline: the list
// comes back while it is still stuck, with the stuck table's published
// row marked stale and the other tables' live rows.
func TestAdminTablesPastABlockedTable(t *testing.T) {
	ctx := context.Background()
	h, _ := testHub(t, func(c *Config) { c.ShutdownGrace = time.Second })
	owner := engine.Player{ID: "p-owner", Name: "Owner"}
	ids := map[string]string{}
	for _, name := range []string{"Stuck", "Paused", "Seated"} {
		ts, err := h.CreateTable(ctx, owner, TableSpec{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = ts.ID
	}
	if err := h.Pause(ctx, ids["Paused"]); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sit(ctx, ids["Seated"], owner, engine.NewCharacterSpec{Name: "Aldric"}); err != nil {
		t.Fatal(err)
	}

	stuck, err := h.get(ctx, ids["Stuck"])
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	stuck.post(func() {
		close(started)
		<-release
	})
	defer close(release)
	<-started

	type answer struct {
		rows []AdminTable
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		rows, err := h.AdminTables(ctx)
		done <- answer{rows, err}
	}()
	var got answer
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the list waits on the stuck table")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	byName := map[string]AdminTable{}
	for _, r := range got.rows {
		byName[r.Name] = r
	}
	if r := byName["Stuck"]; !r.Stale || !r.Loaded || r.ID != ids["Stuck"] || r.Paused {
		t.Errorf("the stuck table's row: %+v", r)
	}
	if r := byName["Paused"]; r.Stale || !r.Loaded || !r.Paused {
		t.Errorf("the paused table's row: %+v", r)
	}
	if r := byName["Seated"]; r.Stale || !r.Loaded || r.Seated != 1 || len(r.SeatList) != 1 || r.SeatList[0].PlayerID != owner.ID {
		t.Errorf("the seated table's row: %+v", r)
	}
	if len(got.rows) != 3 {
		t.Errorf("%d rows, want 3", len(got.rows))
	}
}
