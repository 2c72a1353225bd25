package db

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// ack is the commit of a `say` or `act` acknowledgement: a pending action
// and its event.
func ack(table string, n int64, clientID string) store.Commit {
	id := fmt.Sprintf("a%d", n)
	return store.Commit{TableID: table,
		AddPending: &engine.PendingAction{ID: id, PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: clientID, Text: "I look", CreatedAt: t0},
		Events:     []engine.Event{{Seq: n, TS: t0, Kind: "action", Data: raw(map[string]any{"text": "I look"})}},
	}
}

// TestConcurrentCommitters commits from many goroutines at once, some of
// the commits failing (a duplicate client id, an unknown table), and checks
// that each caller gets its own result: a failing commit fails alone, and
// every commit that succeeded is there after the file is reopened. Run
// under -race.
func TestConcurrentCommitters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	mustCreateTable(t, d, "t2", st)

	const writers, each = 16, 12
	type result struct {
		c    store.Commit
		want string // an error code, "" for success
		err  error
	}
	results := make(chan result, writers*each)
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := seq.Add(1)
				var c store.Commit
				var want string
				switch {
				case i%5 == 3:
					// The client id of this writer's first ack (i = 0, committed before).
					c, want = ack("t1", n, fmt.Sprintf("w%d-0", w)), engine.ECONFLICT
				case i%7 == 6:
					c, want = ack("nope", n, "x"), engine.ENOTFOUND
				case i%2 == 0:
					c = ack("t1", n, fmt.Sprintf("w%d-%d", w, i))
				default:
					c = ack("t2", n, fmt.Sprintf("w%d-%d", w, i))
					if i%3 == 0 { // a turn with a state, in the same batches as acks
						c.State = st.Clone()
						c.State.Game.Turn = int(n)
					}
				}
				results <- result{c, want, d.Commit(ctx, c)}
			}
		}()
	}
	wg.Wait()
	close(results)
	want := map[string]map[string]bool{"t1": {}, "t2": {}}
	var ok, failed int
	for r := range results {
		p := r.c.AddPending
		if r.want != "" {
			if engine.ErrorCode(r.err) != r.want {
				t.Errorf("commit %s to %s: err = %v, want %s", p.ID, r.c.TableID, r.err, r.want)
			}
			failed++
			continue
		}
		if r.err != nil {
			t.Errorf("commit %s: %v", p.ID, r.err)
			continue
		}
		want[r.c.TableID][p.ID] = true
		ok++
	}
	if ok == 0 || failed == 0 {
		t.Fatalf("%d commits succeeded, %d failed: want both", ok, failed)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d = MustOpenDBAt(t, path)
	for table, ids := range want {
		td := mustLoad(t, d, table)
		got := map[string]bool{}
		for _, p := range td.Pending {
			got[p.ID] = true
		}
		for id := range ids {
			if !got[id] {
				t.Errorf("table %s: acknowledged action %s is not stored", table, id)
			}
		}
		if len(got) != len(ids) {
			t.Errorf("table %s: %d pending actions stored, want %d", table, len(got), len(ids))
		}
	}
}

// BenchmarkConcurrentAcks measures acks committed by many goroutines at
// once, as the tables of a busy server do.
func BenchmarkConcurrentAcks(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	mustCreateTable(b, d, "t1", fightingState(b))
	var seq atomic.Int64
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			if err := d.Commit(ctx, ack("t1", n, fmt.Sprintf("k%d", n))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestBatchWithAFailingCommit applies one batch directly (as the writer
// does with what it finds queued): the failing commit gets its error, its
// batch-mates are committed.
func TestBatchWithAFailingCommit(t *testing.T) {
	d := MustOpenDB(t)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	turn := st.Clone()
	turn.Party[0].HP = 3
	reqs := []store.Commit{
		ack("t1", 1, "k1"),
		{TableID: "t1", State: turn},
		ack("t1", 2, "k1"), // duplicate client id
		ack("nope", 3, "k3"),
		ack("t1", 4, "k4"),
	}
	batch, results := requests(reqs...)
	d.committer.apply(batch)
	want := []string{"", "", engine.ECONFLICT, engine.ENOTFOUND, ""}
	for i := range batch {
		err := <-results[i]
		if got := engine.ErrorCode(err); (err == nil) != (want[i] == "") || (err != nil && got != want[i]) {
			t.Errorf("commit %d: err = %v, want code %q", i, err, want[i])
		}
	}
	td := mustLoad(t, d, "t1")
	if len(td.Pending) != 2 || td.Seq != 4 {
		t.Errorf("pending %+v, seq %d: want a1 and a4, seq 4", td.Pending, td.Seq)
	}
	assertSameState(t, td.State, turn)
}

// requests makes a batch of queued commits as Enqueue does, and the
// channels their results come on.
func requests(cs ...store.Commit) ([]*commitReq, []chan error) {
	batch := make([]*commitReq, len(cs))
	results := make([]chan error, len(cs))
	for i, c := range cs {
		res := make(chan error, 1)
		batch[i], results[i] = &commitReq{c: c, at: t0, done: func(err error) { res <- err }}, res
	}
	return batch, results
}

// TestChainBreaksOnFailure: a table's commits queued with one chain
// (store.Commit.Chain) stop at the first that fails: the ones behind it
// fail with store.ErrChainBroken and write nothing, other tables and
// unchained commits are untouched, and a new chain commits again. A light
// commit queued behind a heavy one of its table is applied after it, not
// with the light commits ahead of it: here it falls with the heavy one.
func TestChainBreaksOnFailure(t *testing.T) {
	d := MustOpenDB(t)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	mustCreateTable(t, d, "t2", st)
	chained := func(c store.Commit, chain uint64) store.Commit { c.Chain = chain; return c }
	hurt := st.Clone()
	hurt.Party[0].HP = 3
	broken := store.Commit{TableID: "t1", State: hurt, Events: []engine.Event{{Seq: 1, TS: t0, Kind: "narration", Data: raw(map[string]any{})}}} // seq 1 is taken below
	batch, results := requests(
		chained(ack("t1", 1, "k1"), 7),
		chained(broken, 7),
		chained(ack("t1", 2, "k2"), 7), // light, behind the heavy one
		chained(ack("t2", 1, "k1"), 8),
		ack("t2", 2, "k2"), // unchained
	)
	d.committer.apply(batch)
	for i, want := range []error{nil, errAny, store.ErrChainBroken, nil, nil} {
		err := <-results[i]
		switch {
		case want == nil && err != nil, want != nil && err == nil:
			t.Errorf("commit %d: err %v, want %v", i, err, want)
		case want == store.ErrChainBroken && !errors.Is(err, store.ErrChainBroken):
			t.Errorf("commit %d: err %v, want ErrChainBroken", i, err)
		}
	}
	if td := mustLoad(t, d, "t1"); td.Seq != 1 || len(td.Pending) != 1 || td.State.Party[0].HP == 3 {
		t.Errorf("t1: seq %d, %d pending, HP %d: want only the first ack", td.Seq, len(td.Pending), td.State.Party[0].HP)
	}
	if td := mustLoad(t, d, "t2"); td.Seq != 2 || len(td.Pending) != 2 {
		t.Errorf("t2: seq %d, %d pending: want both acks", td.Seq, len(td.Pending))
	}
	// Still broken for chain 7; a new chain goes through.
	if err := d.Commit(context.Background(), chained(ack("t1", 2, "k2"), 7)); !errors.Is(err, store.ErrChainBroken) {
		t.Errorf("chain 7 after its failure: %v", err)
	}
	if err := d.Commit(context.Background(), chained(ack("t1", 2, "k2"), 9)); err != nil {
		t.Errorf("a new chain: %v", err)
	}
}

// errAny stands for any error in a table of wanted results.
var errAny = errors.New("any error")

// TestAcksBetweenTurnChunks: the writer commits turns a chunk (chunkRows)
// at a time and lets the light commits queued meanwhile go first, except those of a
// table whose turn still waits: they stay behind it. Here that turn fails,
// so the ack behind it must fail with its chain, while an ack of another
// table goes through before the last chunk.
func TestAcksBetweenTurnChunks(t *testing.T) {
	d := MustOpenDB(t)
	st := fightingState(t)
	var turns []store.Commit
	for sum := 0; sum <= chunkRows; {
		i := len(turns)
		id := fmt.Sprintf("t%d", i)
		mustCreateTable(t, d, id, st)
		c := store.Commit{TableID: id, State: st.Clone(), Chain: uint64(i + 1),
			Events: []engine.Event{{Seq: 1, TS: t0, Kind: "narration", Data: raw(map[string]any{})}}}
		turns = append(turns, c)
		sum += rows(c)
	}
	last := len(turns) - 1
	turns[last].Events = append(turns[last].Events, turns[last].Events[0]) // seq 1 twice: it fails
	mustCreateTable(t, d, "other", st)
	m := idleCommitter(d) // its queue is read only by apply here
	batch, results := requests(turns...)
	behind, behindRes := requests(store.Commit{Chain: uint64(last + 1), TableID: turns[last].TableID,
		AddPending: ack("x", 2, "k2").AddPending, Events: []engine.Event{{Seq: 2, TS: t0, Kind: "action", Data: raw(map[string]any{})}}})
	other, otherRes := requests(ack("other", 1, "k1"))
	m.queue <- behind[0]
	m.queue <- other[0]
	m.apply(batch)
	for i := range last {
		if err := <-results[i]; err != nil {
			t.Errorf("turn %d: %v", i, err)
		}
	}
	if err := <-results[last]; err == nil {
		t.Errorf("the turn with a taken seq committed")
	}
	if err := <-behindRes[0]; !errors.Is(err, store.ErrChainBroken) {
		t.Errorf("the ack behind the failed turn: %v, want ErrChainBroken (it went first?)", err)
	}
	if err := <-otherRes[0]; err != nil {
		t.Errorf("the other table's ack: %v", err)
	}
	if td := mustLoad(t, d, "other"); td.Seq != 1 {
		t.Errorf("other: seq %d", td.Seq)
	}
}

// TestBurstInOneTransaction: acks and turns queued together that fit in
// chunkRows commit in one transaction (a burst of acts would otherwise
// cost a transaction per kind and round, and fall behind), a turn's ack
// still after the turn.
func TestBurstInOneTransaction(t *testing.T) {
	d := MustOpenDB(t)
	st := fightingState(t)
	var cs []store.Commit
	for i := range 4 {
		id := fmt.Sprintf("t%d", i)
		mustCreateTable(t, d, id, st)
		cs = append(cs, store.Commit{TableID: id, State: st.Clone(), Chain: 1,
			Events: []engine.Event{{Seq: 1, TS: t0, Kind: "narration", Data: raw(map[string]any{})}}})
		ack := ack(id, 2, "k")
		ack.Chain = 1
		cs = append(cs, ack)
	}
	mustCreateTable(t, d, "other", st)
	cs = append(cs, ack("other", 1, "k"))
	m := idleCommitter(d)
	var txs []int
	d.ObserveWrites(WriteObserver{Transaction: func(_ time.Duration, commits int) { txs = append(txs, commits) }})
	batch, results := requests(cs...)
	m.apply(batch)
	for i, res := range results {
		if err := <-res; err != nil {
			t.Errorf("commit %d: %v", i, err)
		}
	}
	if !slices.Equal(txs, []int{len(cs)}) {
		t.Errorf("transactions of %v commits, want one of %d", txs, len(cs))
	}
	for i := range 4 {
		if td := mustLoad(t, d, fmt.Sprintf("t%d", i)); td.Seq != 2 {
			t.Errorf("t%d: seq %d, want 2", i, td.Seq)
		}
	}
}

// TestEnqueueChecksMessages: Enqueue, the hub's way in, refuses a history
// message that is not JSON as Commit does, at once and without queueing
// it (done is never called).
func TestEnqueueChecksMessages(t *testing.T) {
	d := MustOpenDB(t)
	mustCreateTable(t, d, "t1", fightingState(t))
	bad := store.Commit{TableID: "t1", Messages: []store.AgentMessage{{Agent: "narrative", Turn: 1, Body: []byte(`{`)}}}
	err := d.Enqueue(context.Background(), bad, func(error) { t.Error("done called for a commit that was refused") })
	if engine.ErrorCode(err) != engine.EINVALID {
		t.Errorf("Enqueue of a non-JSON message: %v, want EINVALID", err)
	}
}

// TestEnqueueAppliesWhenIdle: a chat line that finds the writer idle for
// quietFor, and nothing queued, is applied on the caller's goroutine and
// answered before Enqueue returns. It queues behind an unanswered commit
// (so a caller's commits still land in order) and right after a
// transaction (it may be one of a burst); an act and a turn always queue.
func TestEnqueueAppliesWhenIdle(t *testing.T) {
	d := MustOpenDB(t)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	// A writer whose goroutine does not run: what reaches its queue stays
	// there until the test applies it.
	m := idleCommitter(d)
	running := d.committer
	d.committer = m
	t.Cleanup(func() { d.committer = running }) // before Close
	var answered []int64
	enqueue := func(n int64, c store.Commit) {
		t.Helper()
		if err := d.Enqueue(context.Background(), c, func(err error) {
			if err != nil {
				t.Errorf("commit %d: %v", n, err)
			}
			answered = append(answered, n)
		}); err != nil {
			t.Fatalf("Enqueue %d: %v", n, err)
		}
	}
	said := func(n int64) {
		enqueue(n, store.Commit{TableID: "t1", Events: []engine.Event{{Seq: n, TS: t0, Kind: engine.EventChat, Data: raw(map[string]any{"text": "hello"})}}})
	}
	applyQueued := func() {
		m.applying.Lock()
		m.apply(m.queued(maxBatch))
		m.applying.Unlock()
		time.Sleep(quietFor)
	}
	expect := func(what string, want []int64, queued int) {
		t.Helper()
		if !slices.Equal(answered, want) || len(m.queue) != queued {
			t.Fatalf("%s: answered %v with %d queued, want %v with %d queued", what, answered, len(m.queue), want, queued)
		}
	}

	said(1)
	expect("idle writer", []int64{1}, 0)
	said(2) // right after the transaction of line 1
	expect("right after a transaction", []int64{1}, 1)
	applyQueued()
	m.applying.Lock() // the writer is busy
	said(3)
	m.applying.Unlock()
	said(4) // the writer is idle, but line 3 waits
	expect("behind a queued commit", []int64{1, 2}, 2)
	applyQueued()
	enqueue(5, ack("t1", 5, "k5"))
	expect("an act", []int64{1, 2, 3, 4}, 1)
	applyQueued()
	enqueue(6, store.Commit{TableID: "t1", State: st.Clone(), Events: []engine.Event{{Seq: 6, TS: t0, Kind: "narration", Data: raw(map[string]any{})}}})
	expect("a turn", []int64{1, 2, 3, 4, 5}, 1)
	applyQueued()
	said(7)
	expect("idle again", []int64{1, 2, 3, 4, 5, 6, 7}, 0)
	if td := mustLoad(t, d, "t1"); td.Seq != 7 || len(td.Pending) != 1 {
		t.Errorf("stored seq %d and %d pending actions, want 7 and 1", td.Seq, len(td.Pending))
	}
}

// TestChunkLen: a chunk takes turns while their rows fit in chunkRows, and
// always at least one, however large.
func TestChunkLen(t *testing.T) {
	turn := func(events int) *commitReq {
		return &commitReq{c: store.Commit{TableID: "t", State: &engine.State{}, Events: make([]engine.Event, events)}}
	}
	calls := &commitReq{c: store.Commit{Calls: make([]store.LLMCall, 2*chunkRows)}}
	per := rows(turn(10).c) // 15
	for _, tc := range []struct {
		heavy []*commitReq
		want  int
	}{
		{[]*commitReq{turn(10)}, 1},
		{[]*commitReq{calls, turn(10)}, 1},
		{[]*commitReq{turn(10), calls}, 1},
		{slices.Repeat([]*commitReq{turn(10)}, 2*chunkRows/per), chunkRows / per},
	} {
		if got := chunkLen(tc.heavy); got != tc.want {
			t.Errorf("chunkLen of %d commits = %d, want %d", len(tc.heavy), got, tc.want)
		}
	}
}

// TestObserveWrites: the observer hears of every commit answered, failed
// ones marked, and of every transaction with its commits.
func TestObserveWrites(t *testing.T) {
	d := MustOpenDB(t)
	mustCreateTable(t, d, "t1", fightingState(t))
	var mu sync.Mutex
	ok, failed, txCommits := 0, 0, 0
	d.ObserveWrites(WriteObserver{
		Commit: func(wait time.Duration, bad bool) {
			mu.Lock()
			defer mu.Unlock()
			if wait <= 0 {
				t.Errorf("commit waited %v", wait)
			}
			if bad {
				failed++
			} else {
				ok++
			}
		},
		Transaction: func(_ time.Duration, commits int) { mu.Lock(); txCommits += commits; mu.Unlock() },
	})
	ctx := context.Background()
	if err := d.Commit(ctx, ack("t1", 1, "k1")); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(ctx, ack("t1", 1, "k1")); err == nil { // the same client id again
		t.Fatal("a duplicate act committed")
	}
	if err := d.Commit(ctx, ack("t1", 2, "k2")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ok != 2 || failed != 1 || txCommits < 3 {
		t.Errorf("observed %d ok, %d failed, %d commits in transactions", ok, failed, txCommits)
	}
	if d.Queued() != 0 {
		t.Errorf("Queued = %d with nothing queued", d.Queued())
	}
}
