package db

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestActionLifecycle(t *testing.T) {
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
	if err := d.SetActionState(ctx, "t1", store.ActionLife{ActionID: "a", State: store.ActionFailed, Attempts: 2, Error: "503"}); err != nil {
		t.Fatal(err)
	}
	if err := d.SetActionState(ctx, "t1", store.ActionLife{ActionID: "b", State: store.ActionRunning}); err != nil {
		t.Fatal(err)
	}
	lives, err := d.ActionStates(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if a := lives["a"]; a.State != store.ActionFailed || a.Attempts != 2 || a.Error != "503" {
		t.Errorf("a = %+v", a)
	}
	if c := lives["c"]; c.State != store.ActionPending || c.Attempts != 0 {
		t.Errorf("c = %+v", c)
	}
	// a is abandoned, b resolved: both close, with their final state.
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Abandon: []string{"a"}, Resolve: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	// A late update never reopens a closed action.
	if err := d.SetActionState(ctx, "t1", store.ActionLife{ActionID: "a", State: store.ActionRunning}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, d.writer.conn, "SELECT count(*) FROM pending_actions WHERE table_id = 't1' AND id = 'a' AND status = 'resolved' AND state = 'abandoned'"); got != 1 {
		t.Errorf("a is not closed as abandoned")
	}
	if got := count(t, d.writer.conn, "SELECT count(*) FROM pending_actions WHERE table_id = 't1' AND id = 'b' AND status = 'resolved' AND state = 'resolved'"); got != 1 {
		t.Errorf("b is not closed as resolved")
	}
	if p := mustLoad(t, d, "t1").Pending; len(p) != 1 || p[0].ID != "c" {
		t.Errorf("open after closing a and b: %+v", p)
	}
	if lives, _ := d.ActionStates(ctx, "t1"); len(lives) != 1 {
		t.Errorf("lives of closed actions returned: %v", lives)
	}
}

func TestTableFlagsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	d := MustOpenDBAt(t, path)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	mustCreateTable(t, d, "t2", newState(t, ""))
	if err := d.SetTablePaused(ctx, "t1", true); err != nil {
		t.Fatal(err)
	}
	if err := d.CloseTable(ctx, "t2", t0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, d.SetTablePaused(ctx, "nope", true), engine.ENOTFOUND)
	d.Close()
	d = MustOpenDBAt(t, path)
	f, err := d.TableFlags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !f["t1"].Paused || f["t1"].Closed || !f["t2"].Closed || !f["t2"].ClosedAt.Equal(t0) || f["t2"].Paused {
		t.Errorf("flags %+v", f)
	}
}

// TestTableMarksCommitWithTheirEvent: the paused and closed marks are part
// of a commit (the operator's audit event rides with them), so a commit
// that fails, before a mark is written or after, leaves neither the mark
// nor the event, also once the file is opened again.
func TestTableMarksCommitWithTheirEvent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	d := MustOpenDBAt(t, path)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""), engine.Event{Seq: 1, TS: t0, Kind: "table"})
	audit := func(seq int64) []engine.Event {
		return []engine.Event{{Seq: seq, TS: t0, Kind: engine.EventSystem, Data: raw(map[string]any{"code": "moderation"})}}
	}
	paused, resumed, closedAt := true, false, t0.Add(time.Hour)
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Paused: &paused, Events: audit(2)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    store.Commit
		code string
	}{
		// The event fails before the mark is written.
		{"event seq taken", store.Commit{TableID: "t1", Paused: &resumed, Events: audit(2)}, engine.EINTERNAL},
		// The archive fails after the mark and the event are written.
		{"nothing to archive", store.Commit{TableID: "t1", Paused: &resumed, Events: audit(3),
			Archive: &store.Memory{Agent: engine.AgentNarrative, LastTurn: 5, Title: "x"}}, engine.ECONFLICT},
		{"unknown table", store.Commit{TableID: "nope", Paused: &resumed}, engine.ENOTFOUND},
		{"close: event seq taken", store.Commit{TableID: "t1", ClosedAt: &closedAt, Events: audit(2)}, engine.EINTERNAL},
		{"close: nothing to archive", store.Commit{TableID: "t1", ClosedAt: &closedAt, Events: audit(3),
			Archive: &store.Memory{Agent: engine.AgentNarrative, LastTurn: 5, Title: "x"}}, engine.ECONFLICT},
		{"close: unknown table", store.Commit{TableID: "nope", ClosedAt: &closedAt}, engine.ENOTFOUND},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, d.Commit(ctx, c.c), c.code)
		})
	}
	d.Close()
	d = MustOpenDBAt(t, path)
	f, err := d.TableFlags(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !f["t1"].Paused || f["t1"].Closed {
		t.Errorf("flags after the failed commits: %+v, want paused and open", f["t1"])
	}
	if seq := mustLoad(t, d, "t1").Seq; seq != 2 {
		t.Errorf("seq = %d after the failed commits, want 2 (the pause's audit event)", seq)
	}
}

func TestCallsSince(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	for i, c := range []store.LLMCall{
		{TableID: "t1", Agent: "narrative", Model: "m", Started: t0, LatencyMS: 10, Turn: "t1"},
		{TableID: "t2", Agent: "combat", Model: "m", Started: t0.Add(time.Minute), LatencyMS: 20, Error: "503", ErrorKind: store.CallServer, Turn: "t4"},
		{TableID: "t1", Agent: "narrative", Model: "m", Started: t0.Add(2 * time.Minute), LatencyMS: 30},
	} {
		if err := d.LogCall(ctx, c); err != nil {
			t.Fatal(i, err)
		}
	}
	cs, err := d.CallsSince(ctx, t0.Add(time.Minute), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Turn != "t4" || cs[0].ErrorKind != store.CallServer || cs[1].LatencyMS != 30 {
		t.Errorf("since +1m: %+v", cs)
	}
	if cs, _ := d.CallsSince(ctx, time.Time{}, "t1", 0); len(cs) != 2 || cs[0].Turn != "t1" {
		t.Errorf("table t1: %+v", cs)
	}
	if cs, _ := d.CallsSince(ctx, time.Time{}, "", 1); len(cs) != 1 || cs[0].LatencyMS != 30 {
		t.Errorf("limit keeps the newest: %+v", cs)
	}
}
