package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/store"
)

// Storage the server cannot trust, on PostgreSQL: the twin of
// internal/db/health.go. A transaction the database refuses for a reason
// of its own (out of reach, out of disk, read-only, shutting down) fails
// its commits with store.ErrUnavailable and marks the store unavailable:
// the hub then waits instead of playing turns it could not save, and
// /readyz says why. Unlike SQLite's writer, this one does not retry the
// refused transaction: its commits are answered at once (the hub plays a
// turn refused so again later), so a shutdown never waits on the database
// and StopRetries has nothing to stop. A probe write clears the mark.

// storageFault reports an error of the database server or the way to it,
// not of the statement: a later write may work once it is back.
func storageFault(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Connection exceptions (08), insufficient resources (53: disk
		// full, out of memory, too many connections), system errors (58:
		// I/O), a read-only transaction (25006: a standby, or
		// default_transaction_read_only), and a server shutting down,
		// crashed or starting (57P01-03).
		switch pe.Code[:2] {
		case "08", "53", "58":
			return true
		}
		switch pe.Code {
		case "25006", "57P01", "57P02", "57P03":
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		pgconn.Timeout(err)
}

// fault is the storage failure the last write met.
type fault struct {
	err   error
	since time.Time
}

// health tracks whether the last write reached the database.
type health struct {
	fault atomic.Pointer[fault]
	// probing is set while a probe write runs; probed is when the last
	// one started (unix nanoseconds).
	probing atomic.Bool
	probed  atomic.Int64
}

// wrote notes the outcome of a write: a storage fault marks the store
// unavailable (the first one's time kept), a success clears it. It
// returns err, wrapped in store.ErrUnavailable if it is a storage fault.
func (h *health) wrote(err error) error {
	if err == nil {
		if h.fault.Load() != nil {
			h.fault.Store(nil)
		}
		return nil
	}
	if !storageFault(err) {
		return err
	}
	f := &fault{err: err, since: time.Now()}
	if old := h.fault.Load(); old != nil {
		f.since = old.since
	}
	h.fault.Store(f)
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

// healCheck is how often a store that cannot write tries a write of its
// own, so that it says it writes again once the database is back even if
// every commit since was refused.
const healCheck = time.Second

// Unavailable returns nil while the store writes, or why it cannot: the
// error its last write met and since when. Until a write succeeds again,
// Enqueue refuses new commits with store.ErrUnavailable. The hub asks
// often while it waits (every table with a turn to play, every second),
// so the asking also starts the probe write, at most once per healCheck:
// no goroutine runs while the store is well. Safe for concurrent use.
func (d *DB) Unavailable() error {
	f := d.health.fault.Load()
	if f == nil {
		return nil
	}
	d.probe()
	return fmt.Errorf("the database cannot be written since %s: %v", f.since.UTC().Format(time.RFC3339), f.err)
}

// probe starts a probe write unless one runs or ran within healCheck.
func (d *DB) probe() {
	h := &d.health
	if time.Since(time.Unix(0, h.probed.Load())) < healCheck || !h.probing.CompareAndSwap(false, true) {
		return
	}
	h.probed.Store(time.Now().UnixNano())
	go func() {
		defer h.probing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		// Taking a transaction id and committing writes a commit record
		// to the WAL: it fails on a standby or a read-only database and
		// when the server is out of reach. It cannot tell a full data
		// disk (only a commit that writes rows meets it): the next
		// commit then marks the store again.
		err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SELECT pg_current_xact_id()")
			return err
		})
		if err == nil || storageFault(err) {
			h.wrote(err)
		}
	}()
}

// StopRetries is db.DB's, for the same wiring: this writer never retries
// a transaction the database refused, so there is nothing to stop. Safe
// for concurrent use.
func (d *DB) StopRetries() {}
