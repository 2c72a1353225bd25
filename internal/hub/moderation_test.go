package hub_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/internal/store"
	"tavern/internal/tavern"
)

// TestPausedSurvivesRestart: a paused table comes back paused, with its
// waiting action still waiting, and a closed table stays out of the lobby.
func TestPausedSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	open := func() (*hub.Hub, *tavern.Tavern) {
		tv := openTavern(t, path, &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, restartable)
		return tv.Hub, tv
	}
	h, tv := open()
	owner := engine.Player{ID: "p-owner", Name: "Owner"}
	paused, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Paused"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Closed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Pause(ctx, paused.ID); err != nil {
		t.Fatal(err)
	}
	// Paused: a backstory's session start waits instead of playing.
	if _, err := h.Sit(ctx, paused.ID, owner, engine.NewCharacterSpec{Name: "Aldric", Backstory: "A miller's son."}); err != nil {
		t.Fatal(err)
	}
	if err := h.CloseTable(ctx, closed.ID); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	_ = tv.Close()

	h, tv = open()
	defer tv.Close()
	defer h.Close()
	snap, err := h.Snapshot(ctx, paused.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Paused || len(snap.Pending) != 1 || snap.Pending[0].State != "pending" {
		t.Errorf("after restart: paused %v pending %+v", snap.Paused, snap.Pending)
	}
	for _, s := range h.List() {
		if s.ID == closed.ID {
			t.Error("the closed table is back in the lobby")
		}
	}
	rows, err := h.AdminTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[1].Closed || rows[1].ID != closed.ID || !rows[0].Paused {
		t.Errorf("admin rows %+v", rows)
	}
	// Resumed, the waiting session start plays.
	evs, err := h.Subscribe(ctx, paused.ID, snap.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Resume(ctx, paused.ID); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-evs:
			if e.Kind == engine.EventNarration {
				return
			}
		case <-timeout:
			t.Fatal("no narration after resume")
		}
	}
}

// gatedModel is the offline narrator that holds every call until release
// is closed, and says on started that a call is waiting.
type gatedModel struct {
	offline.Narrator
	started chan struct{}
	release chan struct{}
}

func (m *gatedModel) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	select {
	case m.started <- struct{}{}:
	default:
	}
	select {
	case <-m.release:
	case <-ctx.Done():
		return agent.Response{}, ctx.Err()
	}
	return m.Narrator.Complete(ctx, req)
}

// TestAbandonWhileItsTurnRuns: the operator abandons the action whose turn
// is running; the turn's result is dropped when it ends — no narration for
// it, the game does not advance — the audit says so, and the action stays
// resolved across a restart.
func TestAbandonWhileItsTurnRuns(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	open := func(m agent.Model) (*hub.Hub, *tavern.Tavern) {
		tv := openTavern(t, path, &agent.Runner{Narrative: m, Combat: m}, restartable)
		return tv.Hub, tv
	}
	gate := &gatedModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	h, tv := open(gate)
	owner := engine.Player{ID: "p-owner", Name: "Owner"}
	tb, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Stuck"})
	if err != nil {
		t.Fatal(err)
	}
	events, err := h.Subscribe(ctx, tb.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Sitting queues the arrival turn; its model call hangs at the gate.
	if _, err := h.Sit(ctx, tb.ID, owner, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the arrival turn never called the model")
	}
	snap, err := h.Snapshot(ctx, tb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Busy || len(snap.Pending) != 1 {
		t.Fatalf("while the turn runs: busy %v pending %+v", snap.Busy, snap.Pending)
	}
	actionID := snap.Pending[0].ActionID
	if err := h.AbandonAction(ctx, tb.ID, actionID); err != nil {
		t.Fatalf("abandon during its turn: %v", err)
	}
	if err := h.AbandonAction(ctx, tb.ID, actionID); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("second abandon: %v, want ENOTFOUND", err)
	}
	close(gate.release)

	// Wait for the table to be idle, reading what it published meanwhile.
	var audited bool
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if d, ok := ev.Data.(engine.NarrationData); ok && d.ActionID == actionID {
				t.Fatalf("the abandoned action was narrated: %+v", ev)
			}
			if d, ok := ev.Data.(engine.SystemData); ok && d.Action == "abandon" && d.ActionID == actionID {
				audited = true
			}
			continue
		case <-time.After(50 * time.Millisecond):
		}
		snap, err = h.Snapshot(ctx, tb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Busy && len(snap.Pending) == 0 && audited {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never idle: busy %v pending %+v audited %v", snap.Busy, snap.Pending, audited)
		}
	}
	rows, err := h.AdminTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Turn != 0 || rows[0].LastTurnAt != nil {
		t.Errorf("the dropped turn moved the game: turn %d, last turn %v", rows[0].Turn, rows[0].LastTurnAt)
	}
	_ = h.Close()
	_ = tv.Close()

	h, tv = open(offline.Narrator{})
	defer tv.Close()
	defer h.Close()
	if snap, err := h.Snapshot(ctx, tb.ID); err != nil || len(snap.Pending) != 0 {
		t.Errorf("after restart: pending %+v (%v), want the abandoned action resolved", snap.Pending, err)
	}
}

// markSpoiler is the store, except that while on, a commit carrying an
// operator's mark fails inside SQLite after the mark and its audit event
// are written in the transaction: it also archives an agent that has
// nothing to archive (ECONFLICT).
type markSpoiler struct {
	hub.Store
	on *atomic.Bool
}

func (s markSpoiler) Commit(ctx context.Context, c store.Commit) error {
	return s.Store.Commit(ctx, s.spoil(c))
}

// Enqueue is the table's way to commit (pipeline.go).
func (s markSpoiler) Enqueue(ctx context.Context, c store.Commit, done func(error)) error {
	return s.Store.Enqueue(ctx, s.spoil(c), done)
}

func (s markSpoiler) spoil(c store.Commit) store.Commit {
	if (c.Paused != nil || c.ClosedAt != nil) && s.on.Load() {
		c.Archive = &store.Memory{Agent: "nobody", LastTurn: 1, Title: "spoiler"}
	}
	return c
}

// TestMarksCommitWithTheirAudit: the paused and closed marks and their
// audit events are one commit each. When that commit fails, Pause (or
// CloseTable) fails and the table is not paused (closed), neither live nor
// stored nor after a restart, and no audit line was written; once it
// succeeds, both are there after a restart.
func TestMarksCommitWithTheirAudit(t *testing.T) {
	ctx := context.Background()
	var spoil atomic.Bool
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tavern.db"), players: map[string]*engine.Player{}, model: offline.Narrator{}, seed: 7,
		tune: func(c *hub.Config) { c.Store = markSpoiler{Store: c.Store, on: &spoil} }}
	e.serve()
	tid := e.table(hub.TableSpec{})
	audits := func() (n int) {
		evs, err := e.store.Events(ctx, tid, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if d, ok := ev.Data.(engine.SystemData); ok && d.Code == hub.CodeModeration {
				n++
			}
		}
		return n
	}
	paused := func() (live, stored bool) {
		snap, err := e.hub.Snapshot(ctx, tid)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := e.store.TableFlags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Paused, flags[tid].Paused
	}
	closed := func() (live, stored bool) {
		rows, err := e.hub.AdminTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		flags, err := e.store.TableFlags(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(rows) != 1 || rows[0].Closed, flags[tid].Closed
	}

	spoil.Store(true)
	if err := e.hub.Pause(ctx, tid); err == nil {
		t.Fatal("Pause succeeded though its commit failed")
	}
	if err := e.hub.CloseTable(ctx, tid); err == nil {
		t.Fatal("CloseTable succeeded though its commit failed")
	}
	if live, stored := paused(); live || stored {
		t.Errorf("after a failed pause: paused live %v, stored %v", live, stored)
	}
	if live, stored := closed(); live || stored {
		t.Errorf("after a failed close: closed live %v, stored %v", live, stored)
	}
	if n := audits(); n != 0 {
		t.Errorf("%d audit events after a failed pause and close", n)
	}
	e.shutdown()
	e.open()
	if live, _ := paused(); live {
		t.Error("paused after a restart, though the pause failed")
	}
	if live, _ := closed(); live {
		t.Error("closed after a restart, though the close failed")
	}

	spoil.Store(false)
	if err := e.hub.Pause(ctx, tid); err != nil {
		t.Fatal(err)
	}
	e.shutdown()
	e.open()
	if live, stored := paused(); !live || !stored {
		t.Errorf("after a pause and a restart: paused live %v, stored %v", live, stored)
	}
	if n := audits(); n != 1 {
		t.Errorf("%d audit events after one pause, want 1", n)
	}
	if err := e.hub.CloseTable(ctx, tid); err != nil {
		t.Fatal(err)
	}
	e.shutdown()
	e.open()
	if live, stored := closed(); !live || !stored {
		t.Errorf("after a close and a restart: closed live %v, stored %v", live, stored)
	}
	if n := audits(); n != 2 {
		t.Errorf("%d audit events after a pause and a close, want 2", n)
	}
}

// restartable seeds every table alike and gives a running turn the time to
// end at Close, as the restart tests need.
func restartable(c *hub.Config) {
	c.Seed, c.ShutdownGrace = func() uint64 { return 7 }, 2*time.Second
}
