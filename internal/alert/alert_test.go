package alert

import (
	"strings"
	"testing"
	"time"
)

var th = Thresholds{ModelErrorRate: 0.25, ModelMinCalls: 5, ModelP95: 30 * time.Second, SpendHourUSD: 5,
	ActionWait: 10 * time.Minute, CommitP95: 500 * time.Millisecond}

// TestEvaluate: each rule fires past its threshold, and only there.
func TestEvaluate(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   Inputs
		want []string
	}{
		{"quiet", Inputs{Models: []ModelStats{{Model: "m", Calls: 10, Errors: 2, P95: time.Second}}, SpendHourUSD: 1,
			Waiting: map[string]time.Time{"t1": now.Add(-time.Minute)}, Commits: 100, CommitP95: 10 * time.Millisecond,
			Nodes: []Node{{ID: "n1", State: "alive"}}}, nil},
		{"model errors", Inputs{Models: []ModelStats{{Model: "m", Calls: 8, Errors: 2}}}, []string{"model_error_rate:m"}},
		{"too few calls to tell", Inputs{Models: []ModelStats{{Model: "m", Calls: 4, Errors: 4, P95: time.Minute}}}, nil},
		{"slow model", Inputs{Models: []ModelStats{{Model: "m", Calls: 5, P95: 31 * time.Second}}}, []string{"model_latency_p95:m"}},
		{"spend", Inputs{SpendHourUSD: 5}, []string{"spend_per_hour"}},
		{"action waits", Inputs{Waiting: map[string]time.Time{"t1": now.Add(-10 * time.Minute), "t2": now.Add(-9 * time.Minute)}}, []string{"action_waiting:t1"}},
		{"slow store", Inputs{Commits: 3, CommitP95: 600 * time.Millisecond}, []string{"store_commit_latency"}},
		{"node missing", Inputs{Nodes: []Node{{ID: "n1", State: "alive"}, {ID: "n2", Addr: "10.0.0.2:8080", State: "dead"}}}, []string{"node_missing:n2"}},
		{"node back under a new id", Inputs{Nodes: []Node{{ID: "n2", Addr: "10.0.0.2:8080", State: "dead"}, {ID: "n3", Addr: "10.0.0.2:8080", State: "alive"}}}, nil},
		// On a cluster, what only this node measures is alerted under its
		// id, so another node never clears it; what every node reads from
		// the store (waits, nodes) is one alert for all.
		{"a node's own measures", Inputs{Node: "n1", Models: []ModelStats{{Model: "m", Calls: 8, Errors: 2, P95: 31 * time.Second}},
			SpendHourUSD: 5, Commits: 3, CommitP95: 600 * time.Millisecond, Waiting: map[string]time.Time{"t1": now.Add(-10 * time.Minute)},
			Nodes: []Node{{ID: "n1", State: "alive"}, {ID: "n2", State: "dead"}}},
			[]string{"action_waiting:t1", "model_error_rate:m@n1", "model_latency_p95:m@n1", "node_missing:n2", "spend_per_hour:n1", "store_commit_latency:n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate(th, tc.in, now)
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
				if a.Summary == "" || (a.Severity != Warning && a.Severity != Critical) {
					t.Errorf("alert %+v: no summary or severity", a)
				}
			}
			if len(ids) != len(tc.want) {
				t.Fatalf("alerts %v, want %v", ids, tc.want)
			}
			for i := range ids {
				if ids[i] != tc.want[i] {
					t.Errorf("alerts %v, want %v", ids, tc.want)
				}
			}
		})
	}
	if a := Evaluate(th, Inputs{Waiting: map[string]time.Time{"t9": now.Add(-time.Hour)}}, now); len(a) != 1 || a[0].TableID != "t9" {
		t.Errorf("action alert %+v: want table_id t9", a)
	}
	if a := Evaluate(Thresholds{}, Inputs{SpendHourUSD: 1e9, Commits: 1, CommitP95: time.Hour}, now); len(a) != 0 {
		t.Errorf("zero thresholds fired %+v", a)
	}
}

// TestTracker: an alert keeps the time it was raised while it fires, is
// cleared when it stops, and both show in the history.
func TestTracker(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var tr Tracker
	a := Alert{ID: "spend_per_hour", Severity: Warning, Summary: "one"}
	tr.Update([]Alert{a}, t0)
	a.Summary = "two"
	tr.Update([]Alert{a}, t0.Add(time.Minute))
	act := tr.Active()
	if len(act) != 1 || !act[0].Since.Equal(t0) || act[0].Summary != "two" {
		t.Fatalf("active %+v: want raised at t0 with the latest summary", act)
	}
	tr.Update(nil, t0.Add(2*time.Minute))
	if act := tr.Active(); len(act) != 0 {
		t.Fatalf("still active %+v", act)
	}
	tr.Update([]Alert{a}, t0.Add(3*time.Minute))
	h := tr.History(0)
	if len(h) != 2 || h[0].Cleared != nil || h[1].Cleared == nil || !h[1].Cleared.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("history %+v: want the new one firing, the old one cleared at t0+2m", h)
	}
}

// TestRecorder: the recorder's rates and percentiles cover the window,
// the spend the last hour.
func TestRecorder(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var r Recorder
	r.Call(now.Add(-30*time.Minute), "m", time.Second, false, 2) // spend only
	for i := range 10 {
		r.Call(now.Add(-time.Minute), "m", time.Duration(i+1)*time.Second, i < 3, 0.5)
	}
	r.Commit(now.Add(-10*time.Minute), time.Hour) // out of the window
	r.Commit(now, 2*time.Millisecond)
	var in Inputs
	r.Fill(&in, now, 5*time.Minute)
	if len(in.Models) != 1 || in.Models[0].Calls != 10 || in.Models[0].Errors != 3 || in.Models[0].P95 != 10*time.Second {
		t.Errorf("models %+v", in.Models)
	}
	if in.SpendHourUSD != 7 || in.Commits != 1 || in.CommitP95 != 2*time.Millisecond {
		t.Errorf("spend %v, commits %d p95 %v", in.SpendHourUSD, in.Commits, in.CommitP95)
	}
}

// TestTrackerChangesAndRestore: Update says what it raised and cleared,
// and a tracker restored from a history keeps it, its firing alerts
// firing (with their first time) until an Update clears them.
func TestTrackerChangesAndRestore(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var tr Tracker
	a := Alert{ID: "spend_per_hour", Rule: RuleSpendHour, Severity: Warning, Summary: "one", Value: 6, Threshold: 5}
	b := Alert{ID: "node_missing:n2", Rule: RuleNodeMissing, Severity: Critical, Summary: "n2"}
	raised, cleared := tr.Update([]Alert{a, b}, t0)
	if len(raised) != 2 || len(cleared) != 0 || !raised[0].Since.Equal(t0) || raised[0].Value != 6 {
		t.Fatalf("raised %+v cleared %v", raised, cleared)
	}
	if raised, cleared = tr.Update([]Alert{a}, t0.Add(time.Minute)); len(raised) != 0 || len(cleared) != 1 || cleared[0] != b.ID {
		t.Fatalf("raised %+v cleared %v: want %s cleared", raised, cleared, b.ID)
	}

	var back Tracker
	back.Restore(tr.History(0))
	if h := back.History(0); len(h) != 2 || h[0].ID != b.ID || h[0].Cleared == nil || h[1].Cleared != nil {
		t.Fatalf("restored history %+v", h)
	}
	if act := back.Active(); len(act) != 1 || act[0].ID != a.ID || !act[0].Since.Equal(t0) {
		t.Fatalf("restored active %+v: want %s since t0", act, a.ID)
	}
	if raised, cleared := back.Update(nil, t0.Add(2*time.Minute)); len(raised) != 0 || len(cleared) != 1 || cleared[0] != a.ID {
		t.Errorf("raised %+v cleared %v: want the restored alert cleared", raised, cleared)
	}
}

// The summary of a node's own alert names the node; a shared one does not.
func TestNodeInSummary(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	th := Thresholds{CommitP95: 500 * time.Millisecond, ActionWait: 5 * time.Minute}
	for _, a := range Evaluate(th, Inputs{Node: "n1", Commits: 3, CommitP95: time.Second, Waiting: map[string]time.Time{"t1": now.Add(-time.Hour)}}, now) {
		if named := strings.HasSuffix(a.Summary, "(node n1)"); named != (a.Rule == RuleCommit) {
			t.Errorf("%s: %q", a.ID, a.Summary)
		}
	}
}
