package pgdb_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store"
)

var ctx = context.Background()

var at = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

// lostLog records the tables a node is told it lost.
type lostLog struct {
	mu  sync.Mutex
	ids []string
	ch  chan string
}

func newLostLog() *lostLog { return &lostLog{ch: make(chan string, 100)} }

func (l *lostLog) lost(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
	l.ch <- id
}

// wait waits for id to be reported (a test failure after 30 s: the
// renewals and sweeps here run every 20 ms).
func (l *lostLog) wait(t *testing.T, id string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		l.mu.Lock()
		seen := slices.Contains(l.ids, id)
		l.mu.Unlock()
		if seen {
			return
		}
		select {
		case <-l.ch:
		case <-timeout:
			t.Fatalf("table %s never reported", id)
		}
	}
}

// cluster opens n nodes on one new database.
func cluster(t testing.TB, n int, tune func(i int, c *pgdb.NodeConfig)) ([]*pgdb.DB, []*lostLog) {
	t.Helper()
	url := pgtest.URL(t)
	var dbs []*pgdb.DB
	var logs []*lostLog
	for i := range n {
		d, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		l := newLostLog()
		cfg := pgdb.NodeConfig{Addr: "127.0.0.1:1" + string(rune('0'+i)), TTL: 10 * time.Second, Renew: time.Hour, Sweep: time.Hour, Lost: l.lost}
		if tune != nil {
			tune(i, &cfg)
		}
		if err := d.Join(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		dbs, logs = append(dbs, d), append(logs, l)
	}
	return dbs, logs
}

func newTable(t testing.TB, d *pgdb.DB, id string) {
	t.Helper()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 1)
	tb := engine.Table{ID: id, Name: id, Adventure: adventures.Default, Config: st.Config, Seats: 4, CreatedAt: at}
	if err := d.CreateTable(ctx, tb, st, nil); err != nil {
		t.Fatal(err)
	}
}

func chatAt(seq int64) []engine.Event {
	ev := engine.ChatEvent(engine.Player{ID: "p1", Name: "Ann"}, "hello")
	ev.Seq, ev.TS = seq, at
	return []engine.Event{ev}
}

// expire ends node id's lease now, as if it had stalled past its TTL.
func expire(t *testing.T, p *pgxpool.Pool, id string) {
	t.Helper()
	if _, err := p.Exec(ctx, "UPDATE nodes SET expires_at = now() - interval '1 second' WHERE id = $1", id); err != nil {
		t.Fatal(err)
	}
}

func lastSeq(t *testing.T, d *pgdb.DB, id string) int64 {
	t.Helper()
	var seq int64
	if err := d.Pool().QueryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_id = $1", id).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	return seq
}

// TestFencing: a table's owner keeps it from others while its lease lives;
// once it lapses another node claims it with a higher epoch, and the old
// owner's next commit fails with ErrFenced, writes nothing, and the old
// owner is told it lost the table.
func TestFencing(t *testing.T) {
	dbs, lost := cluster(t, 2, nil)
	a, b := dbs[0], dbs[1]
	newTable(t, a, "t1")
	if err := a.Commit(ctx, store.Commit{TableID: "t1", Events: chatAt(1)}); err != nil {
		t.Fatal(err)
	}
	var elsewhere *pgdb.OwnedElsewhere
	_, err := b.LoadTable(ctx, "t1")
	if !errors.As(err, &elsewhere) || !errors.Is(err, store.ErrNotOwner) || elsewhere.Node != a.NodeID() || engine.ErrorCode(err) != engine.EUNAVAILABLE {
		t.Fatalf("load by another node while the owner lives: %v", err)
	}

	expire(t, a.Pool(), a.NodeID())
	td, err := b.LoadTable(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if td.Seq != 1 {
		t.Fatalf("the new owner loads seq %d, want 1", td.Seq)
	}
	_, _, epoch, _, _ := b.Owner(ctx, "t1")
	if epoch != 2 {
		t.Fatalf("epoch after the claim %d, want 2", epoch)
	}

	// The stale owner wakes: its commit is fenced and writes nothing.
	err = a.Commit(ctx, store.Commit{TableID: "t1", Events: chatAt(2)})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("stale owner's commit: %v, want ErrFenced", err)
	}
	lost[0].wait(t, "t1")
	if seq := lastSeq(t, b, "t1"); seq != 1 {
		t.Fatalf("seq %d after a fenced commit, want 1", seq)
	}
	if err := b.Commit(ctx, store.Commit{TableID: "t1", Events: chatAt(2)}); err != nil {
		t.Fatalf("the new owner's commit: %v", err)
	}
	// A fenced node's commits of other tables still land.
	newTable(t, a, "t2")
	if err := a.Commit(ctx, store.Commit{TableID: "t2", Events: chatAt(1)}); err != nil {
		t.Fatal(err)
	}
}

// TestReleaseHandsOver: a table released (the hub unloaded it) is claimed
// by another node at once, without waiting for a lease.
func TestReleaseHandsOver(t *testing.T) {
	dbs, _ := cluster(t, 2, nil)
	a, b := dbs[0], dbs[1]
	newTable(t, a, "t1")
	if err := a.Commit(ctx, store.Commit{TableID: "t1", Events: chatAt(1)}); err != nil {
		t.Fatal(err)
	}
	a.Forget("t1")
	// A commit queued after the release lands after it.
	if err := a.Commit(ctx, store.Commit{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadTable(ctx, "t1"); err != nil {
		t.Fatalf("claim after a release: %v", err)
	}
	if err := a.Commit(ctx, store.Commit{TableID: "t1", Events: chatAt(2)}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("commit after the release: %v, want ErrFenced", err)
	}
}

// TestLeaseLapseDropsEveryTable: a node that finds its lease lapsed drops
// every table and registers anew.
func TestLeaseLapseDropsEveryTable(t *testing.T) {
	dbs, lost := cluster(t, 1, func(_ int, c *pgdb.NodeConfig) { c.Renew = 20 * time.Millisecond })
	a := dbs[0]
	newTable(t, a, "t1")
	newTable(t, a, "t2")
	old := a.NodeID()
	expire(t, a.Pool(), old)
	lost[0].wait(t, "t1")
	lost[0].wait(t, "t2")
	if a.NodeID() == old {
		t.Fatalf("still node %s after its lease lapsed", old)
	}
	// Its old claim is gone: loading claims again, under a new epoch.
	if _, err := a.LoadTable(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, _, epoch, _, _ := a.Owner(ctx, "t1"); epoch != 2 {
		t.Fatalf("epoch %d, want 2", epoch)
	}
}

// TestOrphanSweep: the tables of a dead node that have an open action are
// adopted by a live node's sweep.
func TestOrphanSweep(t *testing.T) {
	adopted := make(chan string, 10)
	dbs, _ := cluster(t, 2, func(i int, c *pgdb.NodeConfig) {
		if i == 1 {
			c.Sweep = 20 * time.Millisecond
			c.Adopt = func(ctx context.Context, id string) { adopted <- id }
		}
	})
	a := dbs[0]
	newTable(t, a, "idle")
	newTable(t, a, "busy")
	p := engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k1", Text: "look", CreatedAt: at}
	if err := a.Commit(ctx, store.Commit{TableID: "busy", AddPending: &p}); err != nil {
		t.Fatal(err)
	}
	expire(t, a.Pool(), a.NodeID())
	select {
	case id := <-adopted:
		if id != "busy" {
			t.Fatalf("adopted %s, want busy (idle tables wait for a request)", id)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing adopted")
	}
}

// TestFencedTableKeepsOthersStates: action states queued together for a
// table this node lost and for one it still owns land for the latter, and
// the node learns it lost the former.
func TestFencedTableKeepsOthersStates(t *testing.T) {
	dbs, lost := cluster(t, 2, nil)
	a, b := dbs[0], dbs[1]
	for _, id := range []string{"t1", "t2"} {
		newTable(t, a, id)
		p := engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k1", Text: "look", CreatedAt: at}
		if err := a.Commit(ctx, store.Commit{TableID: id, AddPending: &p}); err != nil {
			t.Fatal(err)
		}
	}
	expire(t, a.Pool(), a.NodeID())
	if _, err := b.LoadTable(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Pool().Exec(ctx, "UPDATE nodes SET expires_at = now() + interval '1 hour' WHERE id = $1", a.NodeID()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2"} {
		a.QueueActionState(id, store.ActionLife{ActionID: "a1", State: "thinking", Attempts: 1})
	}
	if err := a.Commit(ctx, store.Commit{TableID: "t2", Events: chatAt(1)}); err != nil {
		t.Fatal(err)
	}
	lives, err := a.ActionStates(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	if l := lives["a1"]; l.State != "thinking" || l.Attempts != 1 {
		t.Fatalf("t2's action state %+v, want thinking after 1 attempt", l)
	}
	lost[0].wait(t, "t1")
	lives, err = b.ActionStates(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if l := lives["a1"]; l.State == "thinking" {
		t.Fatalf("the fenced node wrote t1's action state %+v", l)
	}
}
