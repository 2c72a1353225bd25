package db

import (
	"context"
	"errors"
	"sync"

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

// commitReq is one queued Commit; the writer sends its result on done.
type commitReq struct {
	c    store.Commit
	now  string
	done chan error
}

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

	// written holds, per table, a copy of the state whose rows the store
	// wrote last, so that the next commit writes only the rows that
	// changed. It is updated only when a transaction commits, and starts
	// empty: after a restart (or a crash) the first commit of each table
	// writes every row, so no row the store has not written is ever
	// skipped. It assumes the store is the only writer of a table's rows
	// while it is open. Written by the writer goroutine; writtenMu lets
	// Forget drop an entry from outside.
	writtenMu sync.Mutex
	written   map[string]*engine.State
}

func newCommitter(d *DB) *committer {
	m := &committer{d: d, queue: make(chan *commitReq, queueSize), written: map[string]*engine.State{}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.run()
	}()
	return m
}

// close stops taking commits, lets the writer finish the queued ones and
// waits for it. Safe to call twice.
func (m *committer) close() {
	m.mu.Lock()
	if !m.closed {
		m.closed = true
		close(m.queue)
	}
	m.mu.Unlock()
	m.wg.Wait()
}

func (d *DB) groupCommit(ctx context.Context, c store.Commit) error {
	r := &commitReq{c: c, now: formatTime(d.now()), done: make(chan error, 1)}
	m := d.committer
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return commitError(c, errClosed)
	}
	select {
	case m.queue <- r:
	case <-ctx.Done():
		m.mu.RUnlock()
		return commitError(c, ctx.Err())
	}
	m.mu.RUnlock()
	// Queued: the commit will be applied whatever ctx does now, so wait
	// for its result rather than report a commit that may land as failed.
	return <-r.done
}

// run applies the queued commits until the queue is closed and drained.
func (m *committer) run() {
	for r := range m.queue {
		batch := []*commitReq{r}
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-m.queue:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		m.apply(batch)
	}
}

// apply commits batch in one transaction; if that fails, it retries each
// commit alone so each caller gets its own result.
func (m *committer) apply(batch []*commitReq) {
	if err := m.tx(batch); err == nil || len(batch) == 1 {
		for _, r := range batch {
			r.done <- commitError(r.c, err)
		}
		return
	}
	for _, r := range batch {
		r.done <- commitError(r.c, m.tx([]*commitReq{r}))
	}
}

// tx applies the commits of batch in one transaction and, once it is
// committed, records the states it wrote.
func (m *committer) tx(batch []*commitReq) error {
	staged := map[string]*engine.State{}
	err := m.d.write(context.Background(), func(w *writeTx) error {
		w.lookupWritten = func(id string) *engine.State {
			if st, ok := staged[id]; ok {
				return st
			}
			m.writtenMu.Lock()
			defer m.writtenMu.Unlock()
			return m.written[id]
		}
		w.recordWritten = func(id string, st *engine.State) { staged[id] = st.Clone() }
		for _, r := range batch {
			if err := applyCommit(w, r.c, r.now); err != nil {
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

// Forget drops the copy of table tableID's state the store keeps to write
// only changed rows (a few tens of KiB per table): the table's next commit
// with a state writes every row. Call it when a table is unloaded, or
// after its rows were changed other than by Commit. Safe for concurrent
// use.
func (d *DB) Forget(tableID string) {
	m := d.committer
	m.writtenMu.Lock()
	delete(m.written, tableID)
	m.writtenMu.Unlock()
}
