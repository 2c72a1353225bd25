package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tavern/internal/store"
)

// AlertStore is a Store that also keeps the operator's alert history.
type AlertStore interface {
	Store
	RaiseAlert(ctx context.Context, r store.AlertRecord) error
	ClearAlert(ctx context.Context, alertID string, at time.Time) error
	AlertHistory(ctx context.Context, limit int) ([]store.AlertRecord, error)
}

// RunAlerts runs the alert history's cases; open returns a new, empty
// store for one test (the suite closes it).
func RunAlerts(t *testing.T, open func(t *testing.T) AlertStore) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, s AlertStore)
	}{
		{"RaisedAndCleared", testAlertsRaisedAndCleared},
		{"Bounded", testAlertsBounded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

// testAlertsRaisedAndCleared: an alert comes back as raised, once while
// open however often it is raised, and with the time it cleared; raised
// again after, it is a new row.
func testAlertsRaisedAndCleared(t *testing.T, s AlertStore) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	r := store.AlertRecord{AlertID: "action_waiting:t1", Rule: "action_waiting", Severity: "warning", Summary: "A player's action has waited 11m.",
		Value: 660, Threshold: 600, TableID: "t1", RaisedAt: now}
	if err := s.RaiseAlert(ctx, r); err != nil {
		t.Fatal(err)
	}
	again := r
	again.RaisedAt, again.Summary = now.Add(time.Minute), "again"
	if err := s.RaiseAlert(ctx, again); err != nil {
		t.Fatalf("raise an open alert again: %v", err)
	}
	spend := store.AlertRecord{AlertID: "spend_per_hour", Rule: "spend_per_hour", Severity: "warning", Summary: "spend", Value: 6, Threshold: 5, RaisedAt: now.Add(2 * time.Minute)}
	if err := s.RaiseAlert(ctx, spend); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearAlert(ctx, r.AlertID, now.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearAlert(ctx, "nope", now); err != nil {
		t.Fatalf("clear an alert never raised: %v", err)
	}
	h, err := s.AlertHistory(ctx, 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("history %+v %v: want 2 rows", h, err)
	}
	if h[0].AlertID != "spend_per_hour" || h[0].ClearedAt != nil || h[0].TableID != "" {
		t.Errorf("newest %+v: want spend_per_hour firing", h[0])
	}
	got := h[1]
	if got.ClearedAt == nil || !got.ClearedAt.Equal(now.Add(3*time.Minute)) {
		t.Errorf("cleared at %v, want %v", got.ClearedAt, now.Add(3*time.Minute))
	}
	got.ClearedAt = nil
	if !got.RaisedAt.Equal(r.RaisedAt) {
		t.Errorf("raised at %v, want %v", got.RaisedAt, r.RaisedAt)
	}
	got.RaisedAt = r.RaisedAt
	if got != r {
		t.Errorf("row %+v, want %+v", got, r)
	}
	if err := s.RaiseAlert(ctx, again); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.AlertHistory(ctx, 0); len(h) != 3 || h[0].Summary != "again" || h[0].ClearedAt != nil {
		t.Errorf("raised after it cleared: %+v, want a new firing row first", h)
	}
	if h, _ := s.AlertHistory(ctx, 1); len(h) != 1 {
		t.Errorf("limit 1: %d rows", len(h))
	}
}

// testAlertsBounded: the history keeps store.AlertHistoryMax rows, the
// newest, and drops those older than store.AlertHistoryAge.
func testAlertsBounded(t *testing.T, s AlertStore) {
	now := time.Now().UTC()
	old := store.AlertRecord{AlertID: "old", Rule: "spend_per_hour", Severity: "warning", Summary: "old", RaisedAt: now.Add(-store.AlertHistoryAge - time.Hour)}
	if err := s.RaiseAlert(ctx, old); err != nil {
		t.Fatal(err)
	}
	for i := range store.AlertHistoryMax + 5 {
		r := store.AlertRecord{AlertID: fmt.Sprintf("a%d", i), Rule: "node_missing", Severity: "critical", Summary: "n", RaisedAt: now.Add(time.Duration(i) * time.Second)}
		if err := s.RaiseAlert(ctx, r); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if h, _ := s.AlertHistory(ctx, 0); len(h) != 1 || h[0].AlertID != "a0" {
				t.Fatalf("history %+v: the alert of 30 days ago is kept", h)
			}
		}
	}
	h, err := s.AlertHistory(ctx, 0)
	if err != nil || len(h) != store.AlertHistoryMax {
		t.Fatalf("history of %d rows %v, want %d", len(h), err, store.AlertHistoryMax)
	}
	if last := fmt.Sprintf("a%d", store.AlertHistoryMax+4); h[0].AlertID != last || h[len(h)-1].AlertID != "a5" {
		t.Errorf("kept %s … %s, want %s … a5", h[0].AlertID, h[len(h)-1].AlertID, last)
	}
}
