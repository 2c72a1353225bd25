package db

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// maxBatch bounds the commits of one group-commit transaction, so a
// caller at the back of a long queue is not held by a huge transaction.
const maxBatch = 64

// queueSize is how many commits may wait for the writer goroutine before
// Commit blocks.
const queueSize = 256

// errClosed is returned by Commit after Close.
var errClosed = errors.New("db: closed")

// commitReq is one queued Commit; the writer calls done with its result.
type commitReq struct {
	c store.Commit
	// rows is the text of c's rows, encoded by Enqueue (nil: not yet).
	rows *encodedRows
	at   time.Time // stamps the rows
	done func(error)
	// skipped: not applied, for its chain is broken (chainBroken).
	skipped bool
	queued  time.Time // when Enqueue took it (WriteObserver)
}

// WriteObserver hears from the group-commit writer, for the metrics. Its
// functions run on the goroutine that applies the commits (the writer's,
// or a caller's that applies its own: Enqueue) and must not block.
type WriteObserver struct {
	// Commit is called once per commit answered, with the time from
	// Enqueue to its answer (what an ack or a turn waits for the store)
	// and whether it failed.
	Commit func(wait time.Duration, failed bool)
	// Transaction is called once per transaction, with its duration and
	// how many commits it held.
	Transaction func(took time.Duration, commits int)
	// Checkpoint is called once per WAL checkpoint (checkpoint.go), with
	// its mode ("passive": on the checkpointer's connection, beside the
	// writer; "restart": on the writer's, while every commit waits), how
	// long it took and whether it finished (a RESTART gives up while
	// readers hold old frames; either fails on a disk error). It runs on
	// the goroutine that checkpointed and must not block.
	Checkpoint func(mode string, took time.Duration, finished bool)
}

// ObserveWrites hands every later commit and transaction to o. Safe for
// concurrent use.
func (d *DB) ObserveWrites(o WriteObserver) { d.observer.Store(&o) }

// Queued returns how many commits wait for the writer goroutine. Safe for
// concurrent use.
func (d *DB) Queued() int { return len(d.committer.queue) }

// actionKey names one pending action of one table.
type actionKey struct{ table, action string }

// committer is the group-commit writer: one goroutine that owns the queue
// and the states it wrote last.
type committer struct {
	d *DB
	// mu guards closed and sending on queue, so Close cannot close the
	// channel under a sender.
	mu     sync.RWMutex
	closed bool
	queue  chan *commitReq
	wg     sync.WaitGroup
	// stop is closed by close: the writer stops retrying a transaction
	// the storage refused (retryStorage) and fails it.
	stop     chan struct{}
	stopOnce sync.Once

	// written holds, per table, the state whose rows the store wrote last
	// (the caller's own, which it no longer changes: Commit), so that the next commit writes only the rows that
	// changed. It is updated only when a transaction commits, and starts
	// empty: after a restart (or a crash) the first commit of each table
	// writes every row, so no row the store has not written is ever
	// skipped. It assumes the store is the only writer of a table's rows
	// while it is open. Written by the writer goroutine; writtenMu lets
	// Forget drop an entry from outside.
	writtenMu sync.Mutex
	written   map[string]*engine.State

	// lives are the action states queued by QueueActionState and not yet
	// written, the last one of each action only; the writer takes them
	// all into its next transaction, after that transaction's commits.
	// kick wakes the writer when no commit is queued.
	livesMu sync.Mutex
	lives   map[actionKey]store.ActionLife
	kick    chan struct{}

	// broken holds, per table, the chain (store.Commit.Chain) of its last
	// failed commit: the later commits of that chain fail unapplied.
	// Written and read under applying only.
	broken map[string]uint64

	// applying is held by whoever applies commits: the writer goroutine,
	// or a caller of Enqueue that finds it idle (applyNow). unanswered
	// counts the commits taken by Enqueue and not yet answered; a caller
	// applies its own only when there are none, so no commit ever lands
	// before one queued ahead of it. idleSince is when the last apply
	// ended (unix ns).
	applying   sync.Mutex
	unanswered atomic.Int64
	idleSince  atomic.Int64
}

func newCommitter(d *DB) *committer {
	m := idleCommitter(d)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run()
	}()
	return m
}

// idleCommitter is a committer whose writer goroutine is not started.
func idleCommitter(d *DB) *committer {
	return &committer{d: d, queue: make(chan *commitReq, queueSize), stop: make(chan struct{}), written: map[string]*engine.State{},
		lives: map[actionKey]store.ActionLife{}, kick: make(chan struct{}, 1), broken: map[string]uint64{}}
}

// close stops taking commits, lets the writer finish the queued ones and
// waits for it. Safe to call twice.
func (m *committer) close() {
	m.stopRetries()
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.queue)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func (d *DB) groupCommit(ctx context.Context, c store.Commit) error {
	res := make(chan error, 1)
	if err := d.Enqueue(ctx, c, func(err error) { res <- err }); err != nil {
		return err
	}
	// Queued: the commit will be applied whatever ctx does now, so wait
	// for its result rather than report a commit that may land as failed.
	return <-res
}

// Enqueue queues c for the group-commit writer and returns once it is
// queued; the writer then calls done exactly once, from its goroutine,
// with what Commit would have returned. A commit that stands alone (a
// chat line, an operator's mark) and finds the writer idle, with no
// commit waiting, Enqueue applies itself instead, on the caller's
// goroutine, and calls done before it returns (applyNow). done must not
// block: it holds up every commit behind c. ctx bounds the wait for a
// place in the queue; if c cannot be queued (ctx ends first, the store
// is closed, or it cannot write: store.ErrUnavailable) Enqueue returns the
// error and never calls done. The commits
// of one caller are applied in the order it queued them. c.State is the
// store's once queued, as with Commit.
func (d *DB) Enqueue(ctx context.Context, c store.Commit, done func(error)) error {
	// Checked and encoded here, on the caller's goroutine: the writer's
	// time is the one every commit shares.
	if err := validMessages(c.Messages); err != nil {
		return commitError(c, err)
	}
	rows, err := encodeRows(c)
	if err != nil {
		return commitError(c, err)
	}
	r := &commitReq{c: c, rows: rows, at: d.now(), done: done, queued: time.Now()}
	m := d.committer
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return commitError(c, errClosed)
	}
	// While the storage fails, the commits queued wait for it (retried)
	// and new ones are refused at once: their callers answer
	// `unavailable` rather than pile up behind a full disk.
	if d.health.fault.Load() != nil {
		return commitError(c, fmt.Errorf("%w: %w", store.ErrUnavailable, d.Unavailable()))
	}
	if applied, err := m.applyNow(r); applied {
		return err
	}
	m.unanswered.Add(1)
	select {
	case m.queue <- r:
		return nil
	case <-ctx.Done():
		m.unanswered.Add(-1)
		return commitError(c, ctx.Err())
	}
}

// quietFor is how long the writer must have been idle for a commit to be
// applied on its caller's goroutine (applyNow). One that comes sooner is
// likely one of a burst (a round of chat lines, a caller queueing
// several): queued, it goes in one transaction with the ones behind it.
const quietFor = 200 * time.Microsecond

// applyNow applies r on the caller's goroutine, and reports whether it
// did, if r stands alone (light and no action: a chat line, an operator's
// mark), the writer has been idle for quietFor and no commit waits for it:
// the case of most says below saturation. Their transaction then costs no
// hand-off to the writer goroutine and back, a thread woken each on a
// machine that is not busy. Without it a say costs about a fifth more CPU
// (BenchmarkCommitSayApart, whose comment gives the figures), and the
// fan-out run up to 11 % more per delivered frame (4 % the median, in
// nine alternated pairs).
//
// An act's commit queues: its turn's follows at once (the table starts it
// while the store writes), and the writer takes the two in one
// transaction; applied alone, acts cost a third more transactions in a
// `-think 2s` play run, and 6 % more CPU per action. Turns always queue:
// the table goes on while the writer takes them, several to a transaction.
//
// If the storage refuses it, r is not applied, applyNow reports it taken
// and returns the error, and done is never called: its caller, who must
// not wait for the disk, answers at once (Enqueue's contract). Action
// states waiting for the writer make r wait for it too: they go first
// (QueueActionState's promise).
func (m *committer) applyNow(r *commitReq) (bool, error) {
	alone := isLight(r.c) && r.c.AddPending == nil
	quiet := time.Now().UnixNano()-m.idleSince.Load() >= int64(quietFor)
	if !alone || !quiet || !m.applying.TryLock() {
		return false, nil
	}
	defer m.applying.Unlock()
	if m.unanswered.Load() != 0 || m.livesWaiting() {
		return false, nil
	}
	m.unanswered.Add(1)
	err := m.tx([]*commitReq{r}, nil)
	m.idleSince.Store(time.Now().UnixNano())
	if errors.Is(err, store.ErrUnavailable) {
		m.unanswered.Add(-1)
		return true, commitError(r.c, err)
	}
	m.answer(r, err)
	return true, nil
}

// livesWaiting reports whether action states wait for the writer.
func (m *committer) livesWaiting() bool {
	m.livesMu.Lock()
	defer m.livesMu.Unlock()
	return len(m.lives) > 0
}

// QueueActionState queues a.State, a.Attempts and a.Error for the open
// pending action a.ActionID of table tableID and returns at once: the
// group-commit writer writes it with its next transaction, after that
// transaction's commits, so a write queued before a Commit is called lands
// no later than that commit. Of several states queued for one action
// before the writer takes them, only the last is written. As with
// SetActionState, a closed or unknown action is left alone, so a late
// state never reopens a resolved action. The write is bookkeeping: if it
// fails, it is lost. After Close it is dropped. Safe for concurrent use.
func (d *DB) QueueActionState(tableID string, a store.ActionLife) {
	m := d.committer
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return
	}
	m.livesMu.Lock()
	m.lives[actionKey{tableID, a.ActionID}] = a
	m.livesMu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default: // the writer is already due to look
	}
}

// takeLives returns the queued action states, as commits of their tables,
// and empties the queue.
func (m *committer) takeLives() []store.Commit {
	m.livesMu.Lock()
	defer m.livesMu.Unlock()
	if len(m.lives) == 0 {
		return nil
	}
	byTable := map[string]int{}
	var out []store.Commit
	for k, a := range m.lives {
		i, ok := byTable[k.table]
		if !ok {
			i = len(out)
			byTable[k.table] = i
			out = append(out, store.Commit{TableID: k.table})
		}
		out[i].Lives = append(out[i].Lives, a)
	}
	clear(m.lives)
	return out
}

// run applies the queued commits until the queue is closed and drained,
// then writes the action states still queued.
func (m *committer) run() {
	for {
		select {
		case r, ok := <-m.queue:
			if !ok {
				m.applyLocked(nil)
				return
			}
			m.applyLocked(m.fill(r))
		case <-m.kick:
			// Commits queued before the states go first: a state may be
			// about an action whose commit is queued (the hub goes on
			// before its commits land).
			m.applyLocked(m.queued(maxBatch))
		}
	}
}

// applyLocked applies batch holding applying: a caller may be applying
// its own commit (applyNow).
func (m *committer) applyLocked(batch []*commitReq) {
	m.applying.Lock()
	defer m.applying.Unlock()
	m.apply(batch)
}

// fill returns r and the commits queued behind it, at most maxBatch.
func (m *committer) fill(r *commitReq) []*commitReq {
	return append([]*commitReq{r}, m.queued(maxBatch-1)...)
}

// chunkRows bounds the rows one transaction of turns writes while other
// commits wait: between chunks, the light commits queued meanwhile go
// first. About 15 turns, or one batch of model calls. Chunks form only
// when turns queue up, at a saturated writer, and there smaller ones cost
// CPU: every transaction writes its own pages to the WAL (a bound of 64
// rows, about 4 turns, doubled COMMIT's share of the server's CPU, 7 to
// 14 %), while the ack still waits mostly for the queue ahead of it.
const chunkRows = 256

// rows estimates the rows c writes, the cost chunkRows bounds. A state
// counts for the few rows a turn changes in it; an archive for its memory,
// its index entry and the messages it marks.
func rows(c store.Commit) int {
	n := 1 + len(c.Events) + len(c.Messages) + len(c.Calls) + len(c.Resolve) + len(c.Abandon) + len(c.Lives)
	if c.State != nil {
		n += 4
	}
	if c.Archive != nil {
		n += 8
	}
	return n
}

// chunkLen returns how many of the commits of heavy go in the next
// chunk: at least one, then as many as fit in chunkRows.
func chunkLen(heavy []*commitReq) int {
	n, sum := 1, rows(heavy[0].c)
	for n < len(heavy) {
		sum += rows(heavy[n].c)
		if sum > chunkRows {
			break
		}
		n++
	}
	return n
}

// apply commits batch and the queued action states, in as few
// transactions as it can: every transaction writes its own WAL pages and
// pays its own COMMIT, so under a burst of acts one transaction per
// commit would fall behind the arrivals. What fits in chunkRows goes in
// one transaction. Past that, the light commits (acks, chat lines, marks:
// no state, history, archive or call rows) go first in a transaction of
// their own, with the states, and their callers are released at once; the
// turns follow in chunks (chunkRows to a transaction), and the commits
// that arrive meanwhile join them, their light ones first. An ack then
// waits for a few rows and at most one chunk of turns, not behind every
// turn queued with it.
// A transaction the storage refused is tried again until it lands or the
// store closes (retryStorage), so every commit of batch is answered.
func (m *committer) apply(batch []*commitReq) {
	defer func() { m.idleSince.Store(time.Now().UnixNano()) }()
	lives := m.takeLives()
	light, heavy := splitLight(batch, nil)
	for {
		if rowsOf(light)+rowsOf(heavy) <= chunkRows {
			m.applyGroup(append(light, heavy...), lives)
			return
		}
		if len(light) > 0 || len(heavy) == 0 {
			m.applyGroup(light, lives)
			lives = nil
		}
		if len(heavy) == 0 {
			return
		}
		n := chunkLen(heavy)
		m.applyGroup(heavy[:n], lives)
		heavy = heavy[n:]
		if len(heavy) == 0 {
			return
		}
		// The action states queued before the commits taken next go with
		// them (QueueActionState's promise).
		lives, light = m.takeLives(), nil
		if len(heavy) < maxBatch {
			var later []*commitReq
			light, later = splitLight(m.queued(maxBatch-len(heavy)), tablesOf(heavy))
			heavy = append(heavy, later...)
		}
	}
}

// rowsOf estimates the rows the commits of batch write.
func rowsOf(batch []*commitReq) int {
	n := 0
	for _, r := range batch {
		n += rows(r.c)
	}
	return n
}

// queued returns the commits waiting in the queue, at most limit, without
// waiting for any.
func (m *committer) queued(limit int) []*commitReq {
	var batch []*commitReq
	for len(batch) < limit {
		select {
		case r, ok := <-m.queue:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// tablesOf returns the tables batch commits to.
func tablesOf(batch []*commitReq) map[string]bool {
	out := make(map[string]bool, len(batch))
	for _, r := range batch {
		out[r.c.TableID] = true
	}
	return out
}

// splitLight divides batch into the commits that write a few rows and the
// ones that write a turn, each in its queued order. A table may have
// several commits queued (the hub queues the next before the last is
// durable), and they must land in order: once a table has a heavy commit
// in the batch, or one still waiting (heavyTables), its later ones go with
// the heavy group too.
func splitLight(batch []*commitReq, heavyTables map[string]bool) (light, heavy []*commitReq) {
	for _, r := range batch {
		c := r.c
		if isLight(c) && !heavyTables[c.TableID] {
			light = append(light, r)
			continue
		}
		heavy = append(heavy, r)
		if heavyTables == nil {
			heavyTables = map[string]bool{}
		}
		heavyTables[c.TableID] = true
	}
	return light, heavy
}

// isLight reports whether c writes a few rows: an ack, a chat line, an
// operator's mark; no state (a seat carries one), history, archive or call
// rows.
func isLight(c store.Commit) bool {
	return c.State == nil && len(c.Messages) == 0 && c.Archive == nil && len(c.Calls) == 0
}

// applyGroup commits batch and lives in one transaction; if that fails, it
// retries each commit alone so each caller gets its own result, then the
// states. A storage failure is no commit's own: the transaction is tried
// again until the storage takes it (retryStorage).
func (m *committer) applyGroup(batch []*commitReq, lives []store.Commit) {
	if len(batch) == 0 && len(lives) == 0 {
		return
	}
	err := m.retryStorage(batch, lives)
	if err == nil || len(batch)+len(lives) == 1 {
		for _, r := range batch {
			m.answer(r, err)
		}
		return
	}
	for _, r := range batch {
		m.answer(r, m.retryStorage([]*commitReq{r}, nil))
	}
	if len(lives) > 0 {
		_ = m.retryStorage(nil, lives) // bookkeeping: lost if it fails (see QueueActionState)
	}
}

// The backoff of a transaction the storage refused: the first wait, and
// the longest between two tries, so a disk given room again is written
// within that.
const (
	storageRetryFirst = 50 * time.Millisecond
	storageRetryMax   = 2 * time.Second
)

// retryStorage is tx, tried again with backoff while the storage refuses
// it (store.ErrUnavailable: a full disk, an I/O error), so what is queued
// lands once the disk takes it, and nothing is lost or answered before
// that. New commits are refused meanwhile (Enqueue). Once the store
// closes it stops and returns the error.
func (m *committer) retryStorage(batch []*commitReq, lives []store.Commit) error {
	wait := storageRetryFirst
	for {
		err := m.tx(batch, lives)
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		timer := time.NewTimer(wait)
		select {
		case <-m.stop:
			timer.Stop()
			return err
		case <-timer.C:
		}
		wait = min(2*wait, storageRetryMax)
	}
}

// answer gives r's caller its result, and breaks r's chain if it failed.
func (m *committer) answer(r *commitReq, err error) {
	c := r.c
	switch {
	case r.skipped:
		err = store.ErrChainBroken
	case err != nil:
		err = commitError(c, err)
	}
	if o := m.d.observer.Load(); o != nil && o.Commit != nil {
		o.Commit(time.Since(r.queued), err != nil)
	}
	m.unanswered.Add(-1)
	if c.Chain != 0 {
		if err != nil {
			m.broken[c.TableID] = c.Chain
		} else if m.broken[c.TableID] != 0 {
			delete(m.broken, c.TableID) // a new chain: the caller moved on
		}
	}
	r.done(err)
}

// chainBroken reports whether c follows a failed commit of its chain.
func (m *committer) chainBroken(c store.Commit) bool {
	return c.Chain != 0 && m.broken[c.TableID] == c.Chain
}

// tx applies the commits of batch, then lives, in one transaction and, once
// it is committed, records the states it wrote.
func (m *committer) tx(batch []*commitReq, lives []store.Commit) error {
	if o := m.d.observer.Load(); o != nil && o.Transaction != nil {
		start := time.Now()
		defer func() { o.Transaction(time.Since(start), len(batch)) }()
	}
	staged := map[string]*engine.State{}
	now := m.d.now()
	err := m.d.write(context.Background(), func(w *writeTx) error {
		w.lookupWritten = func(id string) *engine.State {
			if st, ok := staged[id]; ok {
				return st
			}
			m.writtenMu.Lock()
			defer m.writtenMu.Unlock()
			return m.written[id]
		}
		// Not a copy: the caller never changes a state it queued (Commit).
		w.recordWritten = func(id string, st *engine.State) { staged[id] = st }
		for _, r := range batch {
			if r.skipped = m.chainBroken(r.c); r.skipped {
				continue
			}
			if err := applyCommit(w, r.c, r.rows, r.at); err != nil {
				return err
			}
		}
		for _, c := range lives {
			if err := applyCommit(w, c, nil, now); err != nil {
				return err
			}
		}
		return nil
	})
	m.writtenMu.Lock()
	defer m.writtenMu.Unlock()
	if err != nil {
		// The transaction may have failed in COMMIT, after its rows were
		// written: forget what was written to its tables, so their next
		// commit writes every row.
		for _, r := range batch {
			delete(m.written, r.c.TableID)
		}
		return err
	}
	for id, st := range staged {
		m.written[id] = st
	}
	return nil
}

// wrote records st (the caller's copy) as the state whose rows the store
// holds for table tableID, written outside the committer.
func (m *committer) wrote(tableID string, st *engine.State) {
	m.writtenMu.Lock()
	m.written[tableID] = st
	m.writtenMu.Unlock()
}

// Forget drops table tableID's state the store keeps to write only
// changed rows: the table's next commit with a state writes every row.
// Call it when a table is unloaded, or after its rows were changed other
// than by Commit. Safe for concurrent use.
func (d *DB) Forget(tableID string) {
	m := d.committer
	m.writtenMu.Lock()
	delete(m.written, tableID)
	m.writtenMu.Unlock()
}
