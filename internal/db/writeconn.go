package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// writer is the store's one writing connection, held from Open to Close.
// Every write transaction runs on it, one at a time (mu), as BEGIN
// IMMEDIATE … COMMIT through statements prepared once on it.
//
// Why not database/sql's transactions: DB.BeginTx starts a goroutine per
// transaction (to roll back when its context ends), parses "BEGIN" anew,
// and each prepared statement must then be bound to the transaction
// (Tx.StmtContext, which allocates). That fixed cost was a third of the
// store's CPU for a transaction of one say, which a fan-out run commits
// hundreds of times a second. Holding the connection also means
// a transaction never waits in the pool behind another.
type writer struct {
	mu   sync.Mutex
	pool *sql.DB // holds conn, its only connection
	conn *sql.Conn
	// stmts are writeQueries, prepared on conn.
	stmts                   map[string]*sql.Stmt
	begin, commit, rollback *sql.Stmt
	// writes counts the transactions begun, in order (health.wrote).
	writes uint64
}

// newWriter pins pool's connection and prepares the write statements on
// it. pool must allow one connection (it is the writer's only one).
func newWriter(ctx context.Context, pool *sql.DB) (*writer, error) {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	w := &writer{pool: pool, conn: conn, stmts: map[string]*sql.Stmt{}}
	prepare := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var s *sql.Stmt
		if s, err = conn.PrepareContext(ctx, q); err != nil {
			err = fmt.Errorf("prepare %q: %w", q, err)
		}
		return s
	}
	// IMMEDIATE takes the write lock at BEGIN, so a transaction never
	// fails with SQLITE_BUSY when it upgrades from reading to writing.
	w.begin, w.commit, w.rollback = prepare("BEGIN IMMEDIATE"), prepare("COMMIT"), prepare("ROLLBACK")
	for _, q := range writeQueries {
		w.stmts[q] = prepare(q)
	}
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// close closes the statements, the connection and the pool.
func (w *writer) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for _, s := range slices.AppendSeq([]*sql.Stmt{w.begin, w.commit, w.rollback}, maps.Values(w.stmts)) {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(append(errs, w.conn.Close(), w.pool.Close())...)
}

// write runs fn in one IMMEDIATE transaction on the writer and commits it,
// or rolls it back if fn fails (or panics). A storage fault (full disk,
// I/O error) comes back wrapped in store.ErrUnavailable and marks the
// store unavailable until a write succeeds (health.go).
func (d *DB) write(ctx context.Context, fn func(w *writeTx) error) error {
	n, err := d.writeOnce(ctx, fn)
	return d.health.wrote(n, err)
}

// writeOnce is write without the health: n is the write's place in the
// writer's order.
func (d *DB) writeOnce(ctx context.Context, fn func(w *writeTx) error) (n uint64, err error) {
	w := d.writer
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	n = w.writes
	d.checkpointer.restartWAL(ctx, w.conn)
	if err := w.beginTx(ctx); err != nil {
		return n, err
	}
	open := true
	defer func() {
		if open {
			// Not ctx: a rollback must run even once ctx has ended.
			w.rollback.ExecContext(context.Background())
		}
	}()
	tx := &writeTx{ctx: ctx, conn: w.conn, stmts: w.stmts}
	if err := fn(tx); err != nil {
		return n, err
	}
	for _, f := range tx.last {
		if err := f(); err != nil {
			return n, err
		}
	}
	if _, err := w.commit.ExecContext(ctx); err != nil {
		return n, err
	}
	open = false
	d.countWAL()
	for _, f := range tx.committed {
		f()
	}
	return n, nil
}

// beginTx begins a transaction. Should a transaction be left open (its
// ROLLBACK failed), BEGIN fails; the writer then rolls that one back and
// begins again rather than fail every later write.
func (w *writer) beginTx(ctx context.Context) error {
	_, err := w.begin.ExecContext(ctx)
	if err == nil {
		return nil
	}
	if _, rerr := w.rollback.ExecContext(ctx); rerr != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if _, err := w.begin.ExecContext(ctx); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return nil
}

// countWAL tells the checkpointer how many pages the writer's last
// transactions put in the WAL. A failure to read the count only delays the
// next checkpoint. w.mu is held.
func (d *DB) countWAL() {
	n, err := walPagesWritten(d.writer.conn)
	if err != nil {
		return
	}
	d.checkpointer.wrote(n)
}
