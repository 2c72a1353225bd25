package agent

import (
	"testing"
	"time"
)

// TestBudgetDay: a table over its own budget is over until the next UTC
// day, told once; the server's budget covers every table; a new day
// starts from nothing and keeps the tables' budgets.
func TestBudgetDay(t *testing.T) {
	now := time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)
	b := &Budget{DayUSD: 10, Now: func() time.Time { return now }}
	b.SetTable("t1", 1)
	b.Add("t1", 0.6, now)
	if st := b.Check("t1"); st.Over {
		t.Fatalf("under budget: %+v", st)
	}
	b.Add("t1", 0.4, now)
	if st := b.Check("t1"); !st.Over || !st.Notice {
		t.Fatalf("at budget: %+v, want over and a notice", st)
	}
	if st := b.Check("t1"); !st.Over || !st.Notice {
		t.Fatalf("again, not yet told: %+v, want the notice still due", st)
	}
	b.Told("t1", true)
	if st := b.Check("t1"); !st.Over || st.Notice || !b.Over("t1") {
		t.Fatalf("once told: %+v, want over without a second notice", st)
	}
	if st := b.Check("t2"); st.Over {
		t.Fatalf("another table: %+v", st)
	}
	b.Add("", 0.5, now.Add(-25*time.Hour)) // yesterday's call: not today's
	if total, _ := b.Today(); total != 1 {
		t.Errorf("today's total %v, want 1", total)
	}
	now = now.Add(time.Hour) // 00:00 UTC the next day
	if st := b.Check("t1"); st.Over {
		t.Errorf("next day: %+v, want under budget", st)
	}
	if lim := b.Limits()["t1"]; lim != 1 {
		t.Errorf("the table's budget after midnight: %v", lim)
	}
	b.Add("t2", 10, now)
	if st := b.Check("t1"); !st.Over || st.Reason != "the server's daily model budget is spent" {
		t.Errorf("server budget spent by another table: %+v", st)
	}
}
