package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
)

// Checkpoints run off the group-commit writer's path. SQLite's
// automatic checkpoint runs inside the COMMIT of whichever transaction takes
// the WAL past 1,000 pages, so every commit queued behind it waited for the
// copy into the database file and its fsyncs. The writer's connection has
// wal_autocheckpoint off; it counts the pages it writes to the WAL, and a
// checkpointer goroutine, on a connection of its own, runs a PASSIVE
// checkpoint (one that never blocks the writer or the readers) each time
// that count passes checkpointLimits.pages.
//
// A PASSIVE checkpoint copies frames but cannot restart the WAL: only the
// writer does, at the start of a transaction, and only when every frame is
// in the database file and no reader is still using one. Under a steady
// stream of commits that moment may never come, and a RESTART checkpoint
// from the checkpointer's connection would starve: it must take the write
// lock, which the writer takes again microseconds after each commit. So
// once the WAL is long (checkpointLimits.restartPages), the writer itself
// runs a RESTART checkpoint before its next transaction (restartWAL),
// right after a PASSIVE one: it copies only the frames written since,
// waits at most restartWait for the readers of old frames, and the
// transaction after it writes the WAL from its start. Every commit waits
// for it. Run at any other moment, it would copy up to a whole PASSIVE's
// worth of frames (30–70 ms in a play run with `-think 2s`, the acks'
// worst tail); right after one it still costs its two fsyncs and the copy
// of the frames written meanwhile (6–24 ms, 12 ms typically, at 1,000
// actions/s, when it came after each PASSIVE: 5 % of the writer's time).
// So it comes after every third PASSIVE only, and that PASSIVE catches up
// first (more PASSIVE rounds while commits add catchUpPages or more), which
// leaves the RESTART little to copy: 11 ms each on average, a third as
// often (0.2 s of 12 in that run, where it was 0.7 s).
// If it gives up (a reader held on), the next PASSIVE checkpoint brings
// another chance; once the WAL holds maxPages frames, the writer tries at
// every transaction when no PASSIVE one runs, and past twice maxPages it
// waits for it. That bounds the WAL near twice maxPages whatever the fsyncs
// of the checkpointer take. Close runs a TRUNCATE checkpoint: the file it
// leaves needs no WAL.

// checkpointLimits are the checkpointer's thresholds, in WAL pages (frames).
type checkpointLimits struct {
	pages int64 // pages written since the last checkpoint that start one (PASSIVE)
	// restartPages: the WAL length from which a PASSIVE checkpoint catches
	// up and the writer restarts the WAL after it (RESTART).
	restartPages int64
	maxPages     int64 // WAL length from which the writer restarts it at any transaction
}

// catchUpPages: a PASSIVE checkpoint before a RESTART runs again while the
// commits wrote this many pages or more during it (at most catchUpRounds
// times), so the RESTART, which every commit waits for, copies few.
const (
	catchUpPages  = 128
	catchUpRounds = 3
)

// defaultCheckpoints checkpoint every 4,000 pages (16 MiB of WAL, four
// times SQLite's default); the writer restarts the WAL after every third,
// and, should readers hold that off, once it holds 16,000 pages (64 MiB).
// A checkpoint copies each page once however often the WAL holds it, and
// a turn rewrites the same few pages (the tails of the event, message and
// action tables, their indexes, the game state): at SQLite's 1,000 a
// checkpoint copied ~5.2 pages per action of BenchmarkPlayRound, at 4,000
// ~3.4 (pread and pwrite each), with a quarter of the fsyncs. The cost is
// the WAL a crash recovery reads back: usually up to 48 MiB, at most
// 128 MiB.
var defaultCheckpoints = checkpointLimits{pages: 4000, restartPages: 12000, maxPages: 16000}

// checkpointer runs the WAL checkpoints of one DB on its own connection.
type checkpointer struct {
	db     *sql.DB
	limits checkpointLimits
	// written counts the pages the writer put in the WAL since the last
	// PASSIVE checkpoint started; walPages is the WAL's length, as the
	// last checkpoint found it plus the pages written since.
	written, walPages atomic.Int64
	// total counts the pages the writer put in the WAL since Open, for
	// the benchmarks.
	total atomic.Int64
	// restartDue: a PASSIVE checkpoint of a long WAL finished since the
	// writer's last RESTART, which now has little to copy.
	restartDue atomic.Bool
	// mu runs one checkpoint at a time: a RESTART one started while a
	// PASSIVE one runs would give up at once (SQLITE_BUSY).
	mu   sync.Mutex
	kick chan struct{}
	stop chan struct{}
	// observed hears of each checkpoint (WriteObserver.Checkpoint).
	observed func(mode string, took time.Duration, finished bool)
	wg       sync.WaitGroup
	once     sync.Once
}

// newCheckpointer opens the checkpointer's connection to path and starts
// its goroutine; close stops it.
func newCheckpointer(path string, limits checkpointLimits, observed func(mode string, took time.Duration, finished bool)) (*checkpointer, error) {
	db, err := sql.Open("sqlite", path+"?"+pragmas)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &checkpointer{db: db, limits: limits, kick: make(chan struct{}, 1), stop: make(chan struct{}), observed: observed}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.run()
	}()
	return c, nil
}

// wrote records n more pages in the WAL and wakes the checkpointer once
// they pass its threshold. It never blocks.
func (c *checkpointer) wrote(n int64) {
	c.walPages.Add(n)
	c.total.Add(n)
	if c.written.Add(n) < c.limits.pages {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default: // already due to run
	}
}

func (c *checkpointer) run() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
			c.passive()
		}
	}
}

// passive runs a PASSIVE checkpoint, and once the WAL is long, catches up
// and has the writer restart it. An error (of the disk, say) is not
// reported: the next one tries again, and the writer's RESTART bounds the
// WAL meanwhile.
func (c *checkpointer) passive() {
	c.mu.Lock()
	defer c.mu.Unlock()
	log, err := c.passiveRound()
	if err != nil || log < c.limits.restartPages {
		return
	}
	for range catchUpRounds {
		if c.written.Load() < catchUpPages {
			break
		}
		if _, err := c.passiveRound(); err != nil {
			return
		}
	}
	c.restartDue.Store(true)
}

// passiveRound runs one PASSIVE checkpoint and returns the WAL's length.
func (c *checkpointer) passiveRound() (log int64, err error) {
	c.written.Store(0)
	start := time.Now()
	busy, log, err := checkpoint(context.Background(), c.db, "PASSIVE")
	c.observed("passive", time.Since(start), err == nil && !busy)
	if err != nil {
		return 0, err
	}
	c.walPages.Store(log + c.written.Load())
	return log, nil
}

// checkpoint runs one checkpoint of the given mode on db and returns
// whether it could not finish (a reader or another checkpoint held it
// off, which is not an error) and the WAL's length in frames.
func checkpoint(ctx context.Context, db queryRower, mode string) (busy bool, log int64, err error) {
	var done int64
	if err := db.QueryRowContext(ctx, "PRAGMA wal_checkpoint("+mode+")").Scan(&busy, &log, &done); err != nil {
		return false, 0, fmt.Errorf("%s checkpoint: %w", mode, err)
	}
	return busy, log, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// restartWait bounds how long the writer's RESTART checkpoint waits for
// the readers of old frames (its busy_timeout, in ms), while every commit
// waits for the writer: past it, the checkpoint gives up, the writer goes
// on, and tries again after the next PASSIVE checkpoint (past maxPages,
// once checkpointLimits.pages more pages are written). A steady stream of
// readers can starve it for the whole busy_timeout otherwise (seconds, in
// TestWALStaysBounded).
const restartWait = 20

// restartWAL runs the writer's RESTART checkpoint after a PASSIVE one
// asked for it (restartPages), or once the WAL holds maxPages frames. While a PASSIVE
// checkpoint runs it tries again at the next transaction (the RESTART then
// has little left to copy); only past twice maxPages does it wait for that
// checkpoint. Call it on the writer between transactions.
func (c *checkpointer) restartWAL(ctx context.Context, writer *sql.Conn) {
	switch n := c.walPages.Load(); {
	case n < c.limits.maxPages && !c.restartDue.Load():
		return
	case n < 2*c.limits.maxPages:
		if !c.mu.TryLock() {
			return
		}
	default:
		c.mu.Lock()
	}
	defer c.mu.Unlock()
	c.restartDue.Store(false)
	start := time.Now()
	finished := c.restart(ctx, writer)
	c.observed("restart", time.Since(start), finished)
	if finished {
		c.walPages.Store(0)
	} else if c.walPages.Load() >= c.limits.maxPages {
		c.walPages.Store(c.limits.maxPages - c.limits.pages)
	}
}

// restart runs a RESTART checkpoint on the writer's connection and reports
// whether it finished.
func (c *checkpointer) restart(ctx context.Context, conn *sql.Conn) bool {
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", restartWait)); err != nil {
		return false
	}
	busy, _, err := checkpoint(ctx, conn, "RESTART")
	// The writer's usual wait; if this fails, the connection is broken.
	conn.ExecContext(ctx, "PRAGMA busy_timeout = "+busyTimeout)
	return !busy && err == nil
}

// close stops the goroutine, runs a last TRUNCATE checkpoint (the writer
// must be idle: Close stops it first) and closes the connection. Safe to
// call twice.
func (c *checkpointer) close() error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		_, _, err = checkpoint(context.Background(), c.db, "TRUNCATE")
		err = errors.Join(err, c.db.Close())
	})
	return err
}

// walPagesWritten returns the pages the writer's connection wrote to the
// WAL since the last call (SQLITE_DBSTATUS_CACHE_WRITE, read and reset).
func walPagesWritten(conn *sql.Conn) (int64, error) {
	var n int
	err := conn.Raw(func(dc any) error {
		s, ok := dc.(sqlite.DBStatus)
		if !ok {
			return fmt.Errorf("driver connection %T has no status", dc)
		}
		var err error
		n, _, err = s.Status(sqlite.DBStatusCacheWrite, true)
		return err
	})
	return int64(n), err
}
