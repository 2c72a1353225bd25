package pgdb

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"tavern/internal/store"
)

// maxBatch bounds the commits of one group-commit transaction.
const maxBatch = 64

// queueSize is how many commits may wait for the writer before Enqueue
// blocks.
const queueSize = 256

// errClosed is returned by Commit after Close.
var errClosed = errors.New("pgdb: closed")

// WriteObserver hears from the group-commit writer, for the metrics. Its
// functions run on the writer's goroutine and must not block.
type WriteObserver struct {
	// Commit is called once per commit answered, with the time from
	// Enqueue to its answer and whether it failed.
	Commit func(wait time.Duration, failed bool)
	// Transaction is called once per transaction, with its duration and
	// how many commits it held.
	Transaction func(took time.Duration, commits int)
}

// ObserveWrites hands every later commit and transaction to o. Safe for
// concurrent use.
func (d *DB) ObserveWrites(o WriteObserver) { d.observer.Store(&o) }

// Queued returns how many commits wait for the writers. Safe for
// concurrent use.
func (d *DB) Queued() int {
	n := 0
	for _, w := range d.writers {
		n += len(w.queue)
	}
	return n
}

// writerCount is how many group-commit writers a DB with a pool of
// maxConns connections runs. Unlike SQLite, PostgreSQL runs transactions
// side by side and flushes their WAL together: one writer leaves it idle
// while each transaction travels and fsyncs, and every table's acks queue
// behind the heaviest turn of any table. A quarter of the pool leaves the
// rest to the reads.
func writerCount(maxConns int32) int { return max(1, min(4, int(maxConns)/4)) }

// writerSeed spreads the tables over the writers.
var writerSeed = maphash.MakeSeed()

// writerFor returns the writer of table id. Every commit, action state
// and release of one table goes through the same writer, in the order
// queued: a table's chain, its row cache and the fence of its epoch are
// that writer's alone, and tables share no rows a commit writes, so the
// writers never wait for each other's locks.
func (d *DB) writerFor(id string) *committer {
	if len(d.writers) == 1 {
		return d.writers[0]
	}
	return d.writers[maphash.String(writerSeed, id)%uint64(len(d.writers))]
}

type commitReq struct {
	c       store.Commit
	rows    *encodedRows
	at      time.Time
	done    func(error)
	skipped bool // not applied: its chain is broken
	// release: not a commit but the release of c.TableID (owners.go).
	release bool
	queued  time.Time
}

type actionKey struct{ table, action string }

// committer is a group-commit writer: one goroutine that owns the queue,
// the chains and the row caches of its share of the tables (writerFor).
type committer struct {
	d      *DB
	mu     sync.RWMutex // guards closed and sending on queue
	closed bool
	queue  chan *commitReq
	wg     sync.WaitGroup

	// written holds, per table, the rows the store wrote last and the
	// owner epoch it wrote them under: a cache of another epoch is never
	// used, for another node may have written the rows since.
	writtenMu sync.Mutex
	written   map[string]*rowCache

	livesMu sync.Mutex
	lives   map[actionKey]store.ActionLife
	kick    chan struct{}

	// broken holds, per table, the chain of its last failed commit.
	// Writer goroutine only.
	broken map[string]uint64
}

func newCommitter(d *DB) *committer {
	m := &committer{d: d, queue: make(chan *commitReq, queueSize), written: map[string]*rowCache{},
		lives: map[actionKey]store.ActionLife{}, kick: make(chan struct{}, 1), broken: map[string]uint64{}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run()
	}()
	return m
}

func (m *committer) close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.queue)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

// Commit applies c in ONE transaction, as db.DB.Commit documents (the
// same order, the same errors), and returns once it is durable or failed.
// On a cluster node it fails with store.ErrFenced, writing nothing, if
// this node no longer owns c.TableID. c.State belongs to the store once
// queued.
func (d *DB) Commit(ctx context.Context, c store.Commit) error {
	res := make(chan error, 1)
	if err := d.Enqueue(ctx, c, func(err error) { res <- err }); err != nil {
		return err
	}
	return <-res
}

// Enqueue queues c for the group-commit writer and returns once it is
// queued; done is then called exactly once, from the writer's goroutine,
// with what Commit would have returned. It must not block. ctx bounds the
// wait for a place in the queue; on error done is never called.
func (d *DB) Enqueue(ctx context.Context, c store.Commit, done func(error)) error {
	if err := validMessages(c.Messages); err != nil {
		return commitError(c, err)
	}
	rows, err := encodeRows(c)
	if err != nil {
		return commitError(c, err)
	}
	r := &commitReq{c: c, rows: rows, at: d.now(), done: done, queued: time.Now()}
	return d.writerFor(c.TableID).enqueue(ctx, r)
}

func (m *committer) enqueue(ctx context.Context, r *commitReq) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return commitError(r.c, errClosed)
	}
	// While the database refuses writes, new commits are refused at once:
	// their callers answer `unavailable` rather than wait (health.go).
	if m.d.health.fault.Load() != nil {
		return commitError(r.c, fmt.Errorf("%w: %w", store.ErrUnavailable, m.d.Unavailable()))
	}
	select {
	case m.queue <- r:
		return nil
	case <-ctx.Done():
		return commitError(r.c, ctx.Err())
	}
}

// QueueActionState queues an open action's life to be written with the
// next group commit and returns at once (db.DB.QueueActionState's
// contract).
func (d *DB) QueueActionState(tableID string, a store.ActionLife) {
	m := d.writerFor(tableID)
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
	default:
	}
}

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

func (m *committer) run() {
	for {
		select {
		case r, ok := <-m.queue:
			if !ok {
				m.applyGroup(nil, m.takeLives())
				return
			}
			batch := append([]*commitReq{r}, m.queued(maxBatch-1)...)
			m.applyGroup(batch, m.takeLives())
		case <-m.kick:
			// Commits queued before the states go first.
			m.applyGroup(m.queued(maxBatch), m.takeLives())
		}
	}
}

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

// applyGroup commits batch and lives in one transaction, tried again
// while the database refuses it (retryStorage); if it fails otherwise, it
// retries each commit alone so each caller gets its own result.
func (m *committer) applyGroup(batch []*commitReq, lives []store.Commit) {
	lives = m.d.ownedLives(lives)
	if len(batch) == 0 {
		m.writeLives(lives)
		return
	}
	err := m.retryStorage(batch, lives)
	// The database refused the transaction, not one of its commits, and
	// the retries were stopped: each alone would be refused too.
	if err == nil || len(batch)+len(lives) == 1 || errors.Is(err, store.ErrUnavailable) {
		for _, r := range batch {
			m.answer(r, err)
		}
		return
	}
	// Each commit alone, then the states, before any caller hears back: a
	// state queued before a Commit lands no later than that commit.
	errs := make([]error, len(batch))
	for i, r := range batch {
		errs[i] = m.settle(r, m.retryStorage([]*commitReq{r}, nil))
	}
	m.writeLives(lives)
	for i, r := range batch {
		r.done(errs[i])
	}
}

// writeLives writes action states, bookkeeping lost if it fails. A table
// fenced meanwhile fails only its own states, and the node learns it
// lost the table.
func (m *committer) writeLives(lives []store.Commit) {
	lives = m.d.ownedLives(lives)
	if len(lives) == 0 {
		return
	}
	err := m.retryStorage(nil, lives)
	switch {
	case err == nil || errors.Is(err, store.ErrUnavailable):
	case len(lives) > 1:
		for _, c := range lives {
			m.writeLives([]store.Commit{c})
		}
	case errors.Is(err, store.ErrFenced):
		m.d.fenced(lives[0].TableID)
	}
}

// The backoff of a transaction the database refused: the first wait, and
// the longest between two tries.
const (
	storageRetryFirst = 50 * time.Millisecond
	storageRetryMax   = 2 * time.Second
)

// retryStorage is tx, tried again with backoff while the database refuses
// it (store.ErrUnavailable: out of reach, read-only, out of disk, a
// transaction past its deadline), as the SQLite writer does: what was
// taken lands once the database takes it, and nothing is answered before
// that; new commits are refused meanwhile (enqueue). Retrying is safe on
// a cluster: each try checks the fence again, so a table claimed by
// another node meanwhile fails with store.ErrFenced, writing nothing. A
// transaction whose COMMIT the database applied but whose answer was lost
// meets its own rows when tried again (a unique key: events, actions) and
// fails instead of writing twice. Once StopRetries is called it returns
// the error.
func (m *committer) retryStorage(batch []*commitReq, lives []store.Commit) error {
	wait := storageRetryFirst
	for {
		err := m.tx(batch, lives)
		if !errors.Is(err, store.ErrUnavailable) {
			return err
		}
		timer := time.NewTimer(wait)
		select {
		case <-m.d.stopRetries:
			timer.Stop()
			return err
		case <-timer.C:
		}
		wait = min(2*wait, storageRetryMax)
	}
}

func (m *committer) answer(r *commitReq, err error) { r.done(m.settle(r, err)) }

// settle does the bookkeeping of r's result and returns the error its
// caller is to hear.
func (m *committer) settle(r *commitReq, err error) error {
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
	if c.Chain != 0 {
		if err != nil {
			m.broken[c.TableID] = c.Chain
		} else if m.broken[c.TableID] != 0 {
			delete(m.broken, c.TableID)
		}
	}
	if errors.Is(err, store.ErrFenced) {
		m.d.fenced(c.TableID)
	}
	return err
}

func (m *committer) chainBroken(c store.Commit) bool {
	return c.Chain != 0 && m.broken[c.TableID] == c.Chain
}

// tx applies the commits of batch, then lives, in one transaction, first
// checking this node still owns their tables (owners.go), and records the
// rows it wrote once it has committed.
func (m *committer) tx(batch []*commitReq, lives []store.Commit) error {
	if o := m.d.observer.Load(); o != nil && o.Transaction != nil {
		start := time.Now()
		defer func() { o.Transaction(time.Since(start), len(batch)) }()
	}
	t := newBtx()
	epochs := m.d.fence(t, batch, lives)
	t.cache = func(id string) *rowCache {
		m.writtenMu.Lock()
		defer m.writtenMu.Unlock()
		c := m.written[id]
		if c == nil || c.epoch != epochs[id] {
			return nil
		}
		return c
	}
	for _, r := range batch {
		if r.release {
			m.d.queueRelease(t, r.c.TableID, epochs[r.c.TableID])
			continue
		}
		if r.skipped = m.chainBroken(r.c); r.skipped {
			continue
		}
		if err := applyCommit(t, r.c, r.rows, r.at); err != nil {
			return err
		}
	}
	now := m.d.now()
	for _, c := range lives {
		if err := applyCommit(t, c, nil, now); err != nil {
			return err
		}
	}
	var err error
	if t.b.Len() > 0 {
		ticket := m.d.health.begin()
		err = m.d.health.wrote(ticket, m.d.run(context.Background(), t))
	} else {
		err = m.d.run(context.Background(), t)
	}
	m.writtenMu.Lock()
	defer m.writtenMu.Unlock()
	if err != nil {
		for _, r := range batch {
			delete(m.written, r.c.TableID)
		}
		return err
	}
	for id, c := range t.staged {
		c.epoch = epochs[id]
		m.written[id] = c
	}
	return nil
}

// Forget drops table tableID's row cache, and on a cluster node releases
// the table (the hub calls it when it unloads a table). Safe for
// concurrent use.
func (d *DB) Forget(tableID string) {
	d.forgetRows(tableID)
	d.release(tableID)
}

// forgetRows drops table id's row cache.
func (d *DB) forgetRows(id string) {
	m := d.writerFor(id)
	m.writtenMu.Lock()
	delete(m.written, id)
	m.writtenMu.Unlock()
}

// keepRows records the rows of table id just written under epoch (c).
func (d *DB) keepRows(id string, c *rowCache) {
	m := d.writerFor(id)
	m.writtenMu.Lock()
	m.written[id] = c
	m.writtenMu.Unlock()
}
