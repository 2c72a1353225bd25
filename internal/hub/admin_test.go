package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
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

// TestOverviewModels: the overview carries the models' health as its
// source tells it at the hub's clock, and an empty list, not null,
// without one.
func TestOverviewModels(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	health := &agent.Health{}
	health.Record("m", now.Add(-10*time.Minute), errors.New("POST: 503 Service Unavailable"))
	health.Record("m", now.Add(-time.Minute), nil)
	cases := []struct {
		name   string
		health ModelHealth
		want   string
	}{
		{"none", nil, `"models":[]`},
		{"one", health, `"models":[{"model":"m","state":"ok","last_success_at":"2026-11-26T05:59:00Z","last_error_at":"2026-11-26T05:50:00Z","last_error":"POST: 503 Service Unavailable","last_error_kind":"server","calls_5m":1,"errors_5m":0,"error_rate_5m":0}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := testHub(t, func(cfg *Config) {
				cfg.Health = c.health
				cfg.Now = func() time.Time { return now }
			})
			o, err := h.Overview(ctx, now.Add(-time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(o)
			if !strings.Contains(string(b), c.want) {
				t.Errorf("overview %s, want %s", b, c.want)
			}
		})
	}
}
