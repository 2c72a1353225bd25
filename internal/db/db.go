// Package db is Tavern's SQLite store (modernc.org/sqlite, pure Go). One
// database file holds players, tables, seats, each table's party and world
// as normalised rows (so the admin can query them), its game state, event
// log, agent histories, memories, model calls and pending actions. [DB]
// satisfies hub.Store, agent.MemoryIndex and agent.CallLog without
// importing hub or agent (DESIGN.md's import rule): those packages declare
// the interfaces, cmd/server wires them, and the records they exchange are
// package store's. Of Tavern's packages, db imports only engine, store and
// migrations.
//
// Start with [Open], which creates the file, applies the embedded migrations
// of package tavern/migrations and returns a [DB]; then [DB.Commit], the one
// write path of a running table, and [DB.LoadTable], which brings a table
// back. Writes go through a single connection, held for the DB's life, in
// IMMEDIATE transactions (writeconn.go): SQLite has one writer at a time,
// and queueing for that connection rather than on the file lock avoids
// SQLITE_BUSY mid-transaction. Reads use a separate
// pool; multi-query reads run in one read transaction, so under WAL they see
// a consistent snapshot while a turn commits. A checkpointer on a
// connection of its own copies the WAL into the file, off the writer's
// path (checkpoint.go).
//
// Times are stored as UTC text and come back in UTC. Event data is stored as
// JSON and comes back as decoded by encoding/json (numbers are float64).
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"tavern/internal/engine"
	"tavern/internal/store"
	"tavern/migrations"
)

// readConns is the size of the read pool.
const readConns = 4

// busyTimeout is how long, in ms, a connection waits for a lock another
// holds.
const busyTimeout = "5000"

// pragmas apply to every connection. modernc honours only the
// _pragma=name(value) form; busy_timeout is applied first by the driver.
const pragmas = "_pragma=busy_timeout(" + busyTimeout + ")&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)"

const (
	// IMMEDIATE takes the write lock at BEGIN, so a transaction never fails
	// with SQLITE_BUSY when it upgrades from reading to writing (here for
	// the migrations' transactions; the writer begins its own as BEGIN
	// IMMEDIATE, writeconn.go). The checkpointer, not the writer's
	// commits, checkpoints (checkpoint.go).
	// A 16 MiB page cache (the default is 2 MiB) keeps the pages the
	// commits of many tables touch: with 100 tables playing, it cut the
	// writer's page reads from 12 to 3 a turn.
	writerParams = pragmas + "&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=cache_size(-16384)"
	// query_only makes a write sent to the read pool by mistake fail at once
	// instead of racing the writer for the lock.
	readerParams = pragmas + "&_pragma=query_only(1)"
)

// DB is an open Tavern database. It is safe for concurrent use; methods
// return errors wrapping the SQLite error with context, or an
// *engine.Error (ENOTFOUND, ECONFLICT, EINVALID) when the caller can act on
// the condition.
type DB struct {
	writer *writer
	reader *sql.DB
	// now stamps updated_at, created_at of messages and resolved_at.
	now func() time.Time

	committer    *committer
	checkpointer *checkpointer
	health       health                        // whether the last write reached the disk (health.go)
	healing      sync.WaitGroup                // the healer goroutine
	observer     atomic.Pointer[WriteObserver] // nil: nobody listens (ObserveWrites)

	closeOnce sync.Once
	closeErr  error
}

// Open opens the database file at path, creating it and its parent
// directory if needed, and applies any pending migration (ctx bounds
// them). It refuses a file it cannot write (ErrUnwritable), one that fails
// PRAGMA quick_check (ErrDamaged) or one whose schema is newer than this
// build (ErrNewerSchema), with a message naming the file and the fix. path must be a plain file path: not ":memory:" (each pooled
// connection would get its own empty database) and not a "file:" URI or a
// path with a query, which would override the pragmas. Several processes or
// DBs may open the same file; SQLite's lock serialises their writes. The
// caller must Close the DB.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, defaultCheckpoints)
}

func open(ctx context.Context, path string, limits checkpointLimits) (*DB, error) {
	if path == "" || strings.HasPrefix(path, ":memory:") || strings.HasPrefix(path, "file:") || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open db %q: want a plain file path", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	w, err := sql.Open("sqlite", path+"?"+writerParams)
	if err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	if err := checkStorage(ctx, path, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", path+"?"+readerParams)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	d := &DB{reader: r, now: time.Now}
	if d.writer, err = newWriter(ctx, w); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	if d.checkpointer, err = newCheckpointer(path, limits, d.observeCheckpoint); err != nil {
		d.Close()
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	d.committer = newCommitter(d)
	d.healing.Add(1)
	stop := d.committer.stop
	go func() {
		defer d.healing.Done()
		d.healer(stop)
	}()
	return d, nil
}

// observeCheckpoint hands a checkpoint to the WriteObserver, if any.
func (d *DB) observeCheckpoint(mode string, took time.Duration, finished bool) {
	if o := d.observer.Load(); o != nil && o.Checkpoint != nil {
		o.Checkpoint(mode, took, finished)
	}
}

// Close closes both pools, after the calls already running finish, and
// leaves the file checkpointed (its WAL empty); calls made after Close
// fail. It is safe to call more than once: later calls return the first
// call's error.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		if d.committer != nil {
			d.committer.close() // finishes the queued commits first
			d.healing.Wait()    // stopped by the committer's stop
		}
		var errs []error
		if d.checkpointer != nil {
			errs = append(errs, d.checkpointer.close())
		}
		errs = append(errs, d.reader.Close(), d.writer.close())
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// migrate applies the embedded migrations on the writer's pool, before
// the writer pins its connection.
func migrate(ctx context.Context, pool *sql.DB) error {
	// Not closed: Provider.Close would close the pool.
	p, err := goose.NewProvider(goose.DialectSQLite3, pool, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// read runs fn in one read transaction on the read pool, so all of its
// queries see the same snapshot.
func (d *DB) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback() // Read-only: nothing to undo, no error worth reporting.
	return fn(tx)
}

// writeTx runs the prepared write statements inside one transaction.
type writeTx struct {
	ctx context.Context
	// conn runs the statements that are not in writeQueries (rare ones).
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
	// lookupWritten and recordWritten, set by the group-commit writer,
	// give the state the rows of a table hold (nil: unknown) and record a
	// state written.
	lookupWritten func(tableID string) *engine.State
	recordWritten func(tableID string, st *engine.State)
	// last run, in order, after the transaction's other statements;
	// committed run, in order, once tx has committed.
	last      []func() error
	committed []func()
}

// beforeCommit runs f after every other statement of the transaction,
// just before it commits; if f fails, the transaction fails.
func (w *writeTx) beforeCommit(f func() error) { w.last = append(w.last, f) }

// afterCommit runs f once the transaction has committed (never if it
// fails): for results handed back to callers.
func (w *writeTx) afterCommit(f func()) { w.committed = append(w.committed, f) }

// written returns the state table id's rows hold, or nil if unknown.
func (w *writeTx) written(id string) *engine.State {
	if w.lookupWritten == nil {
		return nil
	}
	return w.lookupWritten(id)
}

// wrote records that table id's rows now hold st.
func (w *writeTx) wrote(id string, st *engine.State) {
	if w.recordWritten != nil {
		w.recordWritten(id, st)
	}
}

func (w *writeTx) exec(q string, args ...any) (sql.Result, error) {
	return w.stmt(q).ExecContext(w.ctx, args...)
}

func (w *writeTx) queryRow(q string, args ...any) *sql.Row {
	return w.stmt(q).QueryRowContext(w.ctx, args...)
}

// stmt returns the prepared statement q.
func (w *writeTx) stmt(q string) *sql.Stmt {
	s, ok := w.stmts[q]
	if !ok {
		panic("db: statement not in writeQueries: " + q) // A programming error, caught by any test.
	}
	return s
}

// writeQueries lists the statements write transactions run often; Open
// prepares them all on the writer's connection.
var writeQueries = slices.Concat(qInsertEvents, qInsertMessages, qInsertCalls, ownerWriteQueries, ownerQueries, []string{
	qInsertPlayer,
	qInsertTable, qUpdateTableConfig,
	qUpsertCharacter, qDeleteCharacters,
	qUpsertLocation, qDeleteLocations,
	qUpsertNPC, qDeleteNPCs,
	qUpsertTemplate, qDeleteTemplates,
	qUpsertItem, qDeleteItems,
	qUpsertQuest, qDeleteQuests,
	qUpsertRelationship, qDeleteRelationships,
	qUpsertGameState,
	qInsertSeat, qDeleteSeat,
	qInsertPending, qResolvePending, qAbandonPending,
	qArchiveRange, qInsertMemory, qIndexMemory,
	qSetActionState,
	qSetTablePaused, qCloseTable,
})

// The store's encodings (store.FormatTime and the rest), under the names
// this package's code uses: one definition, shared with internal/pgdb.
var (
	formatTime   = store.FormatTime
	parseTime    = store.ParseTime
	parseOptTime = store.ParseOptTime
	plainJSON    = store.PlainJSON
	unjson       = store.DecodeJSON
)

func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()
	}
	return 0
}

// isUnique reports a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// isForeignKey reports a FOREIGN KEY violation: the only foreign keys point
// to tables(id), so it means the table does not exist.
func isForeignKey(err error) bool {
	return sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func tableNotFound(id string) error {
	return engine.Errorf(engine.ENOTFOUND, "table %s not found", id)
}

type rowScanner interface{ Scan(dest ...any) error }

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// each runs q and calls fn for every row.
func each(ctx context.Context, db querier, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
