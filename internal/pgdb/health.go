package pgdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
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
// /readyz says why. As SQLite's writer does, this one tries the refused
// transaction again until it lands (retryStorage) or StopRetries, and
// refuses new commits meanwhile; a probe write (healer) clears the mark
// when no commit waits.

// storageFault reports an error of the database server or the way to it,
// not of the statement: a later write may work once it is back. It is the
// one test of "the database is down" (Unreachable and withUnavailable use
// it too).
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
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}

// fault is the storage failure the last write met.
type fault struct {
	err   error
	since time.Time
}

// health tracks whether the last write reached the database.
type health struct {
	fault atomic.Pointer[fault]
	// tickets orders the writes by their start; mu guards recorded, the
	// ticket of the latest outcome recorded, so that a write that fails
	// after a later one succeeded does not mark the store again.
	tickets  atomic.Int64
	mu       sync.Mutex
	recorded int64
}

// begin returns the ticket of a write about to start.
func (h *health) begin() int64 { return h.tickets.Add(1) }

// wrote notes the outcome of the write of ticket: a storage fault marks the
// store unavailable (the first one's time kept), a success clears it; the
// outcome of a write older than one already noted is not noted. It
// returns err, wrapped in store.ErrUnavailable if it is a storage fault.
func (h *health) wrote(ticket int64, err error) error {
	fail := storageFault(err)
	if err == nil || fail {
		h.mu.Lock()
		if ticket > h.recorded {
			h.recorded = ticket
			if err == nil {
				h.fault.Store(nil)
			} else {
				f := &fault{err: err, since: time.Now()}
				if old := h.fault.Load(); old != nil {
					f.since = old.since
				}
				h.fault.Store(f)
			}
		}
		h.mu.Unlock()
	}
	if fail {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// healCheck is how often a store that cannot write tries a write of its
// own, so that it says it writes again once the database is back even if
// every commit since was refused.
const healCheck = time.Second

// Unavailable returns nil while the store writes, or why it cannot: the
// error its last write met and since when. Until a write succeeds again,
// Enqueue refuses new commits with store.ErrUnavailable and the queued
// ones wait, retried with backoff. Safe for concurrent use.
func (d *DB) Unavailable() error {
	f := d.health.fault.Load()
	if f == nil {
		return nil
	}
	return fmt.Errorf("the database cannot be written since %s: %v", f.since.UTC().Format(time.RFC3339), f.err)
}

// healer probes the database every healCheck while the store is marked
// unavailable, until ctx ends (Close).
func (d *DB) healer(ctx context.Context) {
	tick := time.NewTicker(healCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if d.health.fault.Load() != nil {
			d.probe(ctx)
		}
	}
}

// probe writes a commit record: taking a transaction id and committing
// fails on a standby or a read-only database and when the server is out
// of reach. It cannot tell a full data disk (only a commit that writes
// rows meets it): the next commit then marks the store again.
func (d *DB) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, d.txTimeout)
	defer cancel()
	ticket := d.health.begin()
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT pg_current_xact_id()")
		return err
	})
	if ctx.Err() == nil && (err == nil || storageFault(err)) {
		d.health.wrote(ticket, err)
	}
}

// StopRetries makes the writer give up a transaction the database
// refuses instead of trying it again until it lands: its commits are
// answered with store.ErrUnavailable. For a shutdown, so that callers
// waiting on a database out of reach hear back; Close does it too. Safe
// for concurrent use and to call more than once.
func (d *DB) StopRetries() { d.stopOnce.Do(func() { close(d.stopRetries) }) }
