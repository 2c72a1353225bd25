package hub

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/offline"
	"tavern/internal/store"
)

// forgetful records the tables the hub told the store to forget.
type forgetful struct {
	*db.DB
	mu     sync.Mutex
	forgot []string
}

func (f *forgetful) Forget(id string) {
	f.mu.Lock()
	f.forgot = append(f.forgot, id)
	f.mu.Unlock()
	f.DB.Forget(id)
}

// evictEnv is a hub evicting after 10 minutes on a clock the test moves.
type evictEnv struct {
	h     *Hub
	store *forgetful
	path  string
	now   atomic.Int64
	owner engine.Player
}

func newEvictEnv(t *testing.T, path string) *evictEnv {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	e := &evictEnv{store: &forgetful{DB: d}, path: path, owner: engine.Player{ID: "p-ann", Name: "Ann"}}
	e.now.Store(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	e.h = New(Config{Store: e.store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}, Memory: d}, Seed: func() uint64 { return 7 }, EvictAfter: 10 * time.Minute,
		Now: func() time.Time { return time.Unix(0, e.now.Load()) }})
	if err := e.h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *evictEnv) close() {
	e.h.Close()
	e.store.Close()
}

func (e *evictEnv) advance(d time.Duration) { e.now.Add(int64(d)) }

// loadedTable returns the loaded table id, without touching it.
func (e *evictEnv) loadedTable(id string) *table {
	e.h.mu.RLock()
	defer e.h.mu.RUnlock()
	return e.h.tables[id]
}

// settle waits until table id has no turn running and no action open.
func (e *evictEnv) settle(t *testing.T, id string) {
	t.Helper()
	tb := e.loadedTable(id)
	for range 500 {
		var busy bool
		if err := tb.call(context.Background(), func() error { busy = tb.job != nil || len(tb.acts.open) > 0; return nil }); err != nil {
			t.Fatal(err)
		}
		if !busy {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("table %s still busy", id)
}

// loaded reports whether table id is loaded.
func (e *evictEnv) loaded(id string) bool { return e.loadedTable(id) != nil }

// evict asks table id to evict itself, as evictIdle does, and waits for
// its answer; it reports whether the table is still loaded.
func (e *evictEnv) evict(t *testing.T, id string) bool {
	t.Helper()
	tb := e.loadedTable(id)
	if tb == nil {
		return false
	}
	if err := tb.call(context.Background(), func() error { tb.evict(); return nil }); err != nil {
		t.Fatal(err)
	}
	return e.loaded(id)
}

// TestEvictIdleTable: a table nobody used for EvictAfter is evicted (and
// the store told to forget it), the lobby still lists it from the store,
// and the next request loads it again as it was. A table used since, or
// with a subscriber, a pending action or an armed turn timer stays.
func TestEvictIdleTable(t *testing.T) {
	ctx := context.Background()
	e := newEvictEnv(t, filepath.Join(t.TempDir(), "tavern.db"))
	defer e.close()
	h := e.h
	if err := e.store.CreatePlayer(ctx, e.owner, []byte("tok")); err != nil {
		t.Fatal(err)
	}
	ts, err := h.CreateTable(ctx, e.owner, TableSpec{Name: "Idle"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sit(ctx, ts.ID, e.owner, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	e.settle(t, ts.ID) // the arrival turn a new seat queues
	e.advance(9 * time.Minute)
	if !e.evict(t, ts.ID) {
		t.Fatal("evicted after 9 minutes")
	}
	e.advance(2 * time.Minute)
	tb := e.loadedTable(ts.ID)
	h.evictIdle()
	<-tb.gone // its goroutine ended
	if e.loaded(ts.ID) {
		t.Fatal("still loaded after 11 idle minutes")
	}
	if len(e.store.forgot) != 1 || e.store.forgot[0] != ts.ID {
		t.Errorf("forgotten: %v", e.store.forgot)
	}
	list := h.List()
	if len(list) != 1 || list[0].ID != ts.ID || list[0].Seated != 1 || list[0].Name != "Idle" || list[0].Status != "full" && list[0].Seats == 1 {
		t.Fatalf("lobby of an evicted table: %+v", list)
	}
	want := list[0]
	snap, err := h.Snapshot(ctx, ts.ID)
	if err != nil || len(snap.Party) != 1 || snap.Party[0].Name != "Aldric" {
		t.Fatalf("reloaded: %+v %v", snap, err)
	}
	if got := h.List()[0]; got != want {
		t.Errorf("lobby summary loaded %+v, from the store %+v", got, want)
	}

	// A subscriber keeps the table.
	sctx, cancel := context.WithCancel(ctx)
	ch, err := h.Subscribe(sctx, ts.ID, snap.Seq)
	if err != nil {
		t.Fatal(err)
	}
	e.advance(time.Hour)
	if !e.evict(t, ts.ID) {
		t.Fatal("evicted with a subscriber")
	}
	cancel()
	for range ch { // closed once the unsubscribe is queued
	}

	// An armed turn timer keeps it too (a fight waiting on a PC).
	tb = e.loadedTable(ts.ID)
	if err := tb.call(ctx, func() error {
		if len(tb.subs) > 0 {
			return engine.Errorf(engine.ECONFLICT, "still subscribed")
		}
		tb.timer.alarm = h.after(time.Hour, func() {})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.advance(time.Hour)
	if !e.evict(t, ts.ID) {
		t.Fatal("evicted with a turn timer armed")
	}
	_ = tb.call(ctx, func() error { tb.timer.alarm.Stop(); tb.timer.alarm = nil; return nil })
	e.advance(time.Hour)
	if e.evict(t, ts.ID) {
		t.Fatal("not evicted once the timer is gone")
	}
}

// TestStartLoadsOnlyTablesThatCannotWait: after a restart, a table with a
// pending action and a table in a fight are loaded at once (the action is
// played; the fight's timer can be armed), an idle one is not, and it
// loads on the first request.
func TestStartLoadsOnlyTablesThatCannotWait(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tavern.db")
	e := newEvictEnv(t, path)
	if err := e.store.CreatePlayer(ctx, e.owner, []byte("tok")); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, name := range []string{"Idle", "Waiting", "Fight"} {
		ts, err := e.h.CreateTable(ctx, e.owner, TableSpec{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ts.ID)
	}
	e.close()

	// Behind the hub's back: an acknowledged action at "Waiting", a fight
	// at "Fight".
	d, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	seat := engine.Seat{Seat: "1", PlayerID: e.owner.ID, PlayerName: e.owner.Name, CharacterID: "c-1", JoinedAt: time.Now().UTC()}
	a := &engine.PendingAction{ID: "a-1", PlayerID: e.owner.ID, CharacterID: "c-1", Seat: "1", ClientID: "x", Text: "I wait",
		Status: engine.ActionPending, CreatedAt: time.Now().UTC()}
	if err := d.Commit(ctx, store.Commit{TableID: ids[1], AddSeat: &seat, AddPending: a}); err != nil {
		t.Fatal(err)
	}
	fight, err := d.LoadTable(ctx, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	fight.State.Game.Mode = engine.ModeCombat
	if err := d.Commit(ctx, store.Commit{TableID: ids[2], State: fight.State}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	e = newEvictEnv(t, path)
	defer e.close()
	e.h.mu.RLock()
	_, idle := e.h.tables[ids[0]]
	_, pend := e.h.tables[ids[1]]
	_, inFight := e.h.tables[ids[2]]
	e.h.mu.RUnlock()
	if idle || !pend || !inFight {
		t.Fatalf("loaded at start: idle %v, pending %v, fight %v", idle, pend, inFight)
	}
	if got := len(e.h.List()); got != 3 {
		t.Fatalf("lobby lists %d tables", got)
	}
	if _, err := e.h.Snapshot(ctx, ids[0]); err != nil || !e.loaded(ids[0]) {
		t.Fatalf("the idle table does not load on request: %v", err)
	}
	if _, err := e.h.Snapshot(ctx, "t-nope"); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Fatalf("unknown table: %v", err)
	}
}

// TestAdminTablesLeaveTablesUnloaded: the operator's list of tables gives
// the tables that are not loaded from the store — turn, round and the
// time of the last turn, after a restart too — and loads none of them.
func TestAdminTablesLeaveTablesUnloaded(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tavern.db")
	e := newEvictEnv(t, path)
	var ids []string
	for _, name := range []string{"Quiet", "Played"} {
		ts, err := e.h.CreateTable(ctx, e.owner, TableSpec{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ts.ID)
		e.advance(time.Minute)
	}
	e.close()

	// Behind the hub's back: turn 3 of "Played", narrated at noon.
	d, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	played, err := d.LoadTable(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	played.State.Game.Turn = 3
	noon := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ev := engine.NarrationEvent(engine.AgentNarrative, "The mill is quiet.", nil, "")
	ev.Seq, ev.TS, ev.Turn = played.Seq+1, noon, "t3"
	if err := d.Commit(ctx, store.Commit{TableID: ids[1], State: played.State, Events: []engine.Event{ev}}); err != nil {
		t.Fatal(err)
	}
	d.Close()

	e = newEvictEnv(t, path)
	defer e.close()
	rows, err := e.h.AdminTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].ID != ids[1] || rows[1].ID != ids[0] {
		t.Fatalf("rows %+v, want Played then Quiet", rows)
	}
	if r := rows[0]; r.Loaded || r.Turn != 3 || r.LastTurnAt == nil || !r.LastTurnAt.Equal(noon) || r.Name != "Played" {
		t.Errorf("Played's stored row %+v (last turn %v)", r, r.LastTurnAt)
	}
	if r := rows[1]; r.Loaded || r.LastTurnAt != nil || r.Pending == nil {
		t.Errorf("Quiet's stored row %+v", r)
	}
	if e.loaded(ids[0]) || e.loaded(ids[1]) {
		t.Fatal("listing the tables loaded them")
	}

	// Loaded, the table still knows when its last turn was.
	if _, err := e.h.Snapshot(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	rows, err = e.h.AdminTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; !r.Loaded || r.Turn != 3 || r.LastTurnAt == nil || !r.LastTurnAt.Equal(noon) {
		t.Errorf("Played's live row %+v (last turn %v)", r, r.LastTurnAt)
	}
}
