package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pressly/goose/v3"
	sqlite3 "modernc.org/sqlite/lib"

	"tavern/internal/store"
	"tavern/migrations"
)

// The conditions Open refuses to start on. Each error Open returns for them
// names the file and what to do; errors.Is tells them apart.
var (
	// ErrUnwritable: the file, its directory or its file system cannot
	// be written.
	ErrUnwritable = errors.New("the database cannot be written")
	// ErrDamaged: the file is not a database or fails PRAGMA quick_check.
	ErrDamaged = errors.New("the database is damaged")
	// ErrNewerSchema: the file's schema was written by a newer build.
	ErrNewerSchema = errors.New("the database's schema is newer than this build")
)

// unwritable is ErrUnwritable for the database at path, with the fix.
func unwritable(path string, err error) error {
	return fmt.Errorf("%w (%v): make %s, its directory and its -wal and -shm files writable by this server's user on a file system mounted read-write, or start it with -db on a writable path", ErrUnwritable, err, path)
}

// checkStorage refuses a database this server could not run on: one it
// cannot write, a damaged one, or one whose schema is newer than the
// migrations it embeds (an older one is migrated after). pool is the
// writer's pool, not yet migrated.
func checkStorage(ctx context.Context, path string, pool *sql.DB) error {
	unwritable := func(err error) error { return unwritable(path, err) }
	if err := openWritable(path); err != nil {
		return unwritable(err)
	}
	if err := quickCheck(ctx, pool); err != nil {
		if c := sqliteCode(err) & 0xff; c == sqlite3.SQLITE_CANTOPEN || c == sqlite3.SQLITE_READONLY {
			return unwritable(err) // the -wal or -shm file cannot be made
		}
		return fmt.Errorf("%w (%v): stop the server and restore %s from a backup (README, Backups), or start it on a new file with -db", ErrDamaged, err, path)
	}
	if have, know, err := schemaVersions(ctx, pool); err != nil {
		return err
	} else if have > know {
		return fmt.Errorf("%w (the file is at migration %d, this build knows up to %d): run the Tavern that wrote %s, or a newer one, or restore a backup made by this version", ErrNewerSchema, have, know, path)
	}
	if err := probeWrite(ctx, pool); err != nil {
		return unwritable(err)
	}
	return nil
}

// quickCheck runs PRAGMA quick_check, which reads every page: a file that
// is not a database fails at its first read, a damaged one here.
func quickCheck(ctx context.Context, pool *sql.DB) error {
	rows, err := pool.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		if len(problems) > 3 {
			problems = append(problems[:3], fmt.Sprintf("and %d more", len(problems)-3))
		}
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// schemaVersions returns the file's migration version (0 for a new file)
// and the last one this build embeds.
func schemaVersions(ctx context.Context, pool *sql.DB) (have, know int64, err error) {
	p, err := goose.NewProvider(goose.DialectSQLite3, pool, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return 0, 0, fmt.Errorf("migrate: %w", err)
	}
	for _, s := range p.ListSources() {
		know = max(know, s.Version)
	}
	var n int
	if err := pool.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'").Scan(&n); err != nil || n == 0 {
		return 0, know, err
	}
	if err := pool.QueryRowContext(ctx, "SELECT coalesce(max(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&have); err != nil {
		return 0, 0, fmt.Errorf("read the schema version: %w", err)
	}
	return have, know, nil
}

// openWritable opens the file (made if missing, as SQLite would) for
// writing, which a read-only file system or mode refuses.
func openWritable(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

// probeWrite writes to the file in a transaction it rolls back. SQLite
// opens a file it may not write read-only without a word, and root
// writes files whatever their mode, so only a write tells.
func probeWrite(ctx context.Context, pool *sql.DB) error {
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // the probe leaves nothing behind
	if _, err := tx.ExecContext(ctx, "CREATE TABLE tavern_write_probe (x)"); err != nil {
		return err
	}
	return nil
}

// storageFault reports an error of the storage itself (full, I/O error,
// read-only, damaged), not of the statement: a later write may work
// once an operator fixes the disk.
func storageFault(err error) bool {
	if err == nil {
		return false
	}
	switch sqliteCode(err) & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN,
		sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return true
	}
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EROFS)
}

// fault is the storage failure the last write met.
type fault struct {
	err   error
	since time.Time
}

// health tracks whether the last write reached the disk. Writes record
// their outcome after they let the writer go, so two may record out of
// order: each carries its place in the writer's order (writeOnce), and an
// outcome older than the one recorded is dropped. Otherwise a failure
// recorded after a later success would refuse every commit until the next
// probe.
type health struct {
	mu    sync.Mutex
	last  uint64 // the place of the newest outcome recorded
	fault atomic.Pointer[fault]
}

// wrote notes the outcome of write n (its place in the writer's order): a
// storage fault marks the store unavailable (the first one's time kept),
// a success clears it; an outcome older than one already noted changes
// nothing. It returns err, wrapped in store.ErrUnavailable if it is a
// storage fault.
func (h *health) wrote(n uint64, err error) error {
	faulty := storageFault(err)
	if err != nil && !faulty {
		return err
	}
	h.mu.Lock()
	if n > h.last {
		h.last = n
		switch old := h.fault.Load(); {
		case !faulty && old != nil:
			h.fault.Store(nil)
		case faulty:
			f := &fault{err: err, since: time.Now()}
			if old != nil {
				f.since = old.since
			}
			h.fault.Store(f)
		}
	}
	h.mu.Unlock()
	if !faulty {
		return nil
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// Unavailable returns nil while the store writes, or why it cannot: the
// storage error its last write met (disk full, I/O error, read-only) and
// since when. Until a write succeeds again, Enqueue refuses new commits
// with store.ErrUnavailable and the queued ones wait, retried with
// backoff. Safe for concurrent use.
func (d *DB) Unavailable() error {
	f := d.health.fault.Load()
	if f == nil {
		return nil
	}
	return fmt.Errorf("the database cannot be written since %s: %v", f.since.UTC().Format(time.RFC3339), f.err)
}

// StopRetries makes the writer give up a transaction the storage refuses
// instead of trying it again until it lands: its commits are answered
// with store.ErrUnavailable. For a shutdown, so that the callers waiting
// on a full disk hear back and the server stops; Close does it too. Safe
// for concurrent use and to call more than once.
func (d *DB) StopRetries() { d.committer.stopRetries() }

func (m *committer) stopRetries() { m.stopOnce.Do(func() { close(m.stop) }) }

// SetMaxPages caps the file at n pages of the writer's connection (PRAGMA
// max_page_count; 0 lifts the cap): past it every write fails as on a
// full disk. For tests of a full store, and an operator's hard cap. Safe
// for concurrent use.
func (d *DB) SetMaxPages(ctx context.Context, n int) error {
	if n <= 0 {
		n = 0xfffffffe
	}
	w := d.writer
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.conn.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n))
	return err
}

// PageCount returns the pages the file holds. Safe for concurrent use.
func (d *DB) PageCount(ctx context.Context) (int, error) {
	var n int
	err := d.reader.QueryRowContext(ctx, "PRAGMA page_count").Scan(&n)
	return n, err
}

// healCheck is how often a store that cannot write tries a write of its own
// when no commit is retried, so that it says it writes again once the disk
// has room even if every commit since was refused.
const healCheck = time.Second

// healer probes the storage while it fails, until stop is closed.
func (d *DB) healer(stop <-chan struct{}) {
	tick := time.NewTicker(healCheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if d.health.fault.Load() != nil {
			_ = d.write(context.Background(), probeRoom)
		}
	}
}

// probeRoom writes a few pages and takes them back in one committed
// transaction: it fails as a commit would on a full disk (new pages, WAL
// frames) and leaves the schema as it was.
func probeRoom(w *writeTx) error {
	for _, q := range []string{
		"CREATE TABLE tavern_room_probe (x)",
		"INSERT INTO tavern_room_probe VALUES (zeroblob(16384))",
		"DROP TABLE tavern_room_probe",
	} {
		if _, err := w.conn.ExecContext(w.ctx, q); err != nil {
			return err
		}
	}
	return nil
}
