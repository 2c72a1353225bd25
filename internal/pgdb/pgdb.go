// Package pgdb is Tavern's PostgreSQL store (pgx v5 and pgxpool,
// hand-written SQL): the cluster path of DESIGN.md "Beyond one machine",
// beside internal/db, the embedded SQLite default. [DB] keeps the same
// contract as db.DB — hub.Store, agent.MemoryIndex, agent.CallQueue, the
// web layer's Players — and the same suite (internal/store/storetest)
// checks both. Of Tavern's packages it imports only engine, store and
// migrations/postgres.
//
// Start with [Open], which checks the database (C collation), applies the
// migrations of package tavern/migrations/postgres and returns a [DB];
// then [DB.Commit], the one write path of a running table. Commits are
// group-committed as on SQLite: one goroutine takes the queued commits and
// sends each transaction's statements in one batch (one round trip). When
// the DB is a cluster node ([DB.Join]), every transaction first reads its
// tables' owner rows FOR SHARE and fails the commits of a table this node
// no longer owns with store.ErrFenced (owners.go).
//
// Times and JSON are stored as text, as on SQLite, so replays give the
// bytes the live frames carried; multi-query reads run in one REPEATABLE
// READ READ ONLY transaction.
package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"tavern/internal/engine"
	"tavern/internal/store"
	"tavern/migrations/postgres"
)

// Options tune Open. The zero value is the defaults.
type Options struct {
	// MaxConns bounds the pool (0: 16).
	MaxConns int
	// TxTimeout bounds each write transaction (0: DefaultTxTimeout); past
	// it the transaction fails as a storage fault.
	TxTimeout time.Duration
}

// DefaultTxTimeout is Options.TxTimeout's default: far above a write's
// usual milliseconds, well below the lease TTL.
const DefaultTxTimeout = 5 * time.Second

// DB is an open Tavern database on PostgreSQL. It is safe for concurrent
// use; methods return errors wrapping pgx's with context, or an
// *engine.Error (ENOTFOUND, ECONFLICT, EINVALID) when the caller can act on
// the condition.
type DB struct {
	pool      *pgxpool.Pool
	now       func() time.Time
	txTimeout time.Duration

	// writers are the group-commit writers, each of a share of the
	// tables (writerFor).
	writers []*committer
	// stopRetries, once closed, ends the retries of transactions the
	// database refused (StopRetries).
	stopRetries chan struct{}
	stopOnce    sync.Once
	health      health // whether the last write reached the database (health.go)
	// stopHealer ends the healer goroutine; healed is closed once it has.
	stopHealer context.CancelFunc
	healed     chan struct{}
	observer   atomic.Pointer[WriteObserver]
	// node is the cluster membership once Join is called (owners.go).
	node atomic.Pointer[node]

	closeOnce sync.Once
	closeErr  error
}

// IsURL reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsURL(s string) bool {
	for _, p := range []string{"postgres://", "postgresql://"} {
		if len(s) >= len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// Where names the database url points at, as host:port/database, for
// the logs: never its password.
func Where(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return where(cfg)
}

func where(c *pgconn.Config) string { return fmt.Sprintf("%s:%d/%s", c.Host, c.Port, c.Database) }

// Open connects to the database at url (postgres://…), checks that it
// sorts text bytewise (the C collation: text order is time order, as on
// SQLite) and applies any pending migration, under an advisory lock so
// that nodes starting together migrate once. ctx bounds the connection and
// the migrations. The caller must Close the DB.
func Open(ctx context.Context, url string, opt Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: the URL does not parse (want postgres://user:password@host:port/database): %w", err)
	}
	cfg.MaxConns = 16
	if opt.MaxConns > 0 {
		cfg.MaxConns = int32(opt.MaxConns)
	}
	rp := cfg.ConnConfig.RuntimeParams
	if rp["application_name"] == "" {
		// Which process a session is, in pg_stat_activity and the logs.
		rp["application_name"] = fmt.Sprintf("tavern-%d", os.Getpid())
	}
	if rp["idle_in_transaction_session_timeout"] == "" {
		// Bounds how long a stalled node can hold an owner row's lock
		// (DESIGN.md "Beyond one machine").
		rp["idle_in_transaction_session_timeout"] = "5000"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	where := where(&cfg.ConnConfig.Config)
	if err := checkDatabase(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres %s: %w", where, err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres %s: %w", where, err)
	}
	d := &DB{pool: pool, now: time.Now, txTimeout: DefaultTxTimeout}
	if opt.TxTimeout > 0 {
		d.txTimeout = opt.TxTimeout
	}
	d.stopRetries = make(chan struct{})
	for range writerCount(cfg.MaxConns) {
		d.writers = append(d.writers, newCommitter(d))
	}
	heal, stopHealer := context.WithCancel(context.Background())
	d.stopHealer, d.healed = stopHealer, make(chan struct{})
	go func() {
		defer close(d.healed)
		d.healer(heal)
	}()
	return d, nil
}

// checkDatabase refuses a database whose collation is not C: times are
// text, compared and sorted as bytes.
func checkDatabase(ctx context.Context, pool *pgxpool.Pool) error {
	var collate string
	err := pool.QueryRow(ctx, "SELECT datcollate FROM pg_database WHERE datname = current_database()").Scan(&collate)
	if err != nil {
		return err
	}
	if collate != "C" && collate != "POSIX" {
		return fmt.Errorf("the database's collation is %q, want C (CREATE DATABASE … TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C')", collate)
	}
	return nil
}

// migrate applies the embedded migrations, holding goose's advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	sdb := stdlib.OpenDBFromPool(pool)
	defer sdb.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sdb, postgres.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// Close stops the group-commit writer after the queued commits, leaves the
// cluster if the DB joined it (Leave), and closes the pool. Safe to call
// more than once: later calls return the first call's error.
func (d *DB) Close() error {
	d.closeOnce.Do(func() {
		d.StopRetries()
		for _, w := range d.writers {
			w.close()
		}
		d.stopHealer()
		<-d.healed
		var errs []error
		if n := d.node.Load(); n != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			errs = append(errs, d.leave(ctx, n))
			cancel()
		}
		d.pool.Close()
		d.closeErr = errors.Join(errs...)
	})
	return d.closeErr
}

// Pool returns the connection pool, for tests and tools that read the
// database directly. The DB owns it.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// SQL returns a database/sql handle on the pool (for the schema tools);
// the caller closes it, which leaves the pool open.
func (d *DB) SQL() *sql.DB { return stdlib.OpenDBFromPool(d.pool) }

// read runs fn in one REPEATABLE READ READ ONLY transaction, so all of its
// queries see one snapshot.
func (d *DB) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) // read only: nothing to undo
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// The store's encodings (store.FormatTime and the rest), under the names
// this package's code uses: one definition, shared with internal/db.
var (
	formatTime   = store.FormatTime
	parseTime    = store.ParseTime
	parseOptTime = store.ParseOptTime
	plainJSON    = store.PlainJSON
	unjson       = store.DecodeJSON
)

func pgCode(err error) string {
	var e *pgconn.PgError
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// isUnique reports a unique or primary key violation.
func isUnique(err error) bool { return pgCode(err) == "23505" }

// isForeignKey reports a foreign key violation: the only foreign keys point
// to tables(id), so it means the table does not exist.
func isForeignKey(err error) bool { return pgCode(err) == "23503" }

func tableNotFound(id string) error {
	return engine.Errorf(engine.ENOTFOUND, "table %s not found", id)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// each runs q and calls fn for every row.
func each(ctx context.Context, db querier, q string, args []any, fn func(pgx.Rows) error) error {
	rows, err := db.Query(ctx, q, args...)
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

// errUnavailable is what a caller sees when the database is out of
// reach: store.ErrUnavailable (EUNAVAILABLE, so clients are told to try
// again), which the hub treats as a store that cannot save, as for a full
// disk, with the cause wrapped for the log.
var errUnavailable = store.ErrUnavailable

// rolledBack reports an error that ended the transaction for a reason
// of the session, not of the statement: a serialization failure or a
// deadlock (40001, 40P01), a query cancelled (57014), or a session ended
// by idle_in_transaction_session_timeout (25P03: a node that was paused
// inside a commit, woken after its lease moved). Nothing was applied, and
// trying again may work.
func rolledBack(err error) bool {
	switch pgCode(err) {
	case "40001", "40P01", "57014", "25P03":
		return true
	}
	return false
}

// withUnavailable marks err EUNAVAILABLE when the database is out of
// reach or rolled the transaction back for a reason of its own, so that
// the client is told to send it again rather than `internal`.
func withUnavailable(err error) error {
	if storageFault(err) || rolledBack(err) {
		return fmt.Errorf("%w (%w)", errUnavailable, err)
	}
	return err
}

// Unreachable reports whether err (from Open) means the database is out
// of reach, so that trying again later may succeed.
func Unreachable(err error) bool { return storageFault(err) }
