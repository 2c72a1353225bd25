package db

import (
	"context"
	"database/sql"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"tavern/internal/engine"
)

// walFrameBytes is the size of one WAL frame: a 24-byte header and a page.
const walFrameBytes = 24 + 4096

func walSize(tb testing.TB, path string) int64 {
	tb.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Size()
}

// openWithLimits opens a DB at a new path with the given checkpoint limits
// and closes it when the test ends.
func openWithLimits(tb testing.TB, limits checkpointLimits) (*DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "tavern.db")
	d, err := open(context.Background(), path, limits)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return d, path
}

// truncateWAL empties the WAL of the schema and the tables the test
// created, whose pages the writer does not count.
func truncateWAL(tb testing.TB, d *DB, path string) {
	tb.Helper()
	if busy, _, err := checkpoint(context.Background(), d.checkpointer.db, "TRUNCATE"); err != nil || busy || walSize(tb, path) != 0 {
		tb.Fatalf("TRUNCATE checkpoint: busy %v, %v; WAL %d bytes", busy, err, walSize(tb, path))
	}
}

// never is a page count no test reaches: the checkpointer goroutine is
// never woken, and the test runs the checkpoints it wants itself.
const never = 1 << 40

// checkpointsSeen counts the finished checkpoints d runs, by mode.
func checkpointsSeen(d *DB) func() map[string]int {
	var mu sync.Mutex
	seen := map[string]int{}
	d.ObserveWrites(WriteObserver{Checkpoint: func(mode string, _ time.Duration, finished bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			seen[mode]++
		}
	}})
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// commitBenchTurns commits n turns of table t1 and returns the pages they put
// in the WAL.
func commitBenchTurns(tb testing.TB, d *DB, st **engine.State, seq *int64, from, n int) int64 {
	tb.Helper()
	before := d.checkpointer.total.Load()
	for i := from; i < from+n; i++ {
		if err := d.Commit(context.Background(), benchTurn(st, i, seq)); err != nil {
			tb.Fatal(err)
		}
	}
	return d.checkpointer.total.Load() - before
}

// TestWALRestartsAtMaxPages: once the WAL holds maxPages frames, the
// writer restarts it before its next transaction, with no PASSIVE
// checkpoint to help, so the WAL file stays near maxPages. Without the
// RESTART it would hold every page the turns wrote. Everything here runs
// on the writer, between Commits: the bound holds at any speed.
func TestWALRestartsAtMaxPages(t *testing.T) {
	limits := checkpointLimits{pages: never, restartPages: never, maxPages: 64}
	d, path := openWithLimits(t, limits)
	seen := checkpointsSeen(d)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	truncateWAL(t, d, path)
	var seq int64
	written := commitBenchTurns(t, d, &st, &seq, 1, 100)
	if written < 10*limits.maxPages {
		t.Fatalf("the turns wrote %d pages: too few to tell", written)
	}
	// maxPages, and the transaction that passed it.
	if bound := 2 * limits.maxPages * walFrameBytes; walSize(t, path) > bound {
		t.Errorf("WAL is %d bytes after %d pages written, want at most %d", walSize(t, path), written, bound)
	}
	if got := seen(); got["restart"] == 0 || got["passive"] != 0 {
		t.Errorf("finished checkpoints %v, want restart ones only", got)
	}
}

// TestWALRestartsAfterLongPassive: a PASSIVE checkpoint that finds the WAL
// restartPages long or more has the writer restart it before its next
// transaction, although maxPages is far; one that finds it shorter does
// not. The test runs the checkpointer's rounds itself, between Commits,
// so nothing depends on its goroutine keeping pace (BenchmarkWALHeld
// measures that).
func TestWALRestartsAfterLongPassive(t *testing.T) {
	limits := checkpointLimits{pages: never, restartPages: 256, maxPages: never}
	d, path := openWithLimits(t, limits)
	seen := checkpointsSeen(d)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	truncateWAL(t, d, path)
	var seq int64
	turn := 1
	commit := func(n int) int64 {
		w := commitBenchTurns(t, d, &st, &seq, turn, n)
		turn += n
		return w
	}

	if w := commit(5); w >= limits.restartPages {
		t.Fatalf("5 turns wrote %d pages, want fewer than restartPages", w)
	}
	d.checkpointer.passive()
	commit(1)
	if got := seen(); got["passive"] != 1 || got["restart"] != 0 {
		t.Fatalf("after a PASSIVE checkpoint of a short WAL: finished checkpoints %v, want one passive only", got)
	}

	if w := commit(40); w < limits.restartPages {
		t.Fatalf("40 turns wrote %d pages, want restartPages or more", w)
	}
	d.checkpointer.passive()
	held := walSize(t, path)
	w := commit(5)
	if got := seen(); got["passive"] != 2 || got["restart"] != 1 {
		t.Fatalf("after a PASSIVE checkpoint of a long WAL: finished checkpoints %v, want two passive and one restart", got)
	}
	// Restarted, the WAL is written again from its start: 5 more turns do
	// not lengthen its file.
	if n := walSize(t, path); n != held {
		t.Errorf("WAL is %d bytes after %d more pages, want the %d it held (restarted)", n, w, held)
	}
}

// TestCloseCheckpoints: Close leaves every commit in the database file and
// the WAL empty, even while another connection keeps the file open (so
// SQLite's own checkpoint at the last close does not run), and a reopen
// sees everything.
func TestCloseCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	other, err := sql.Open("sqlite", path+"?"+readerParams)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	if err := other.Ping(); err != nil { // opens the connection
		t.Fatal(err)
	}
	const turns = 20
	var seq int64
	for i := 1; i <= turns; i++ {
		if err := d.Commit(ctx, benchTurn(&st, i, &seq)); err != nil {
			t.Fatal(err)
		}
	}
	if walSize(t, path) == 0 {
		t.Fatal("the WAL is empty before Close: the test checks nothing")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := walSize(t, path); n != 0 {
		t.Errorf("WAL is %d bytes after Close, want 0", n)
	}
	d = MustOpenDBAt(t, path)
	td := mustLoad(t, d, "t1")
	if td.Seq != turns*4 || td.State.Game.Turn != turns || td.State.Party[0].HP != turns%20 {
		t.Errorf("after reopen: seq %d, turn %d, HP %d; want %d, %d, %d", td.Seq, td.State.Game.Turn, td.State.Party[0].HP, turns*4, turns, turns%20)
	}
	msgs, err := d.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil || len(msgs) != 2*turns {
		t.Errorf("after reopen: %d messages (%v), want %d", len(msgs), err, 2*turns)
	}
}

// BenchmarkWALHeld commits turns with the checkpointer's goroutine
// running, and reports the longest WAL file it saw (wal-max-frames) and
// the finished RESTART checkpoints per PASSIVE one. How far behind the
// writer the checkpointer runs depends on the machine's load, so these
// figures are measured here, not asserted by a test.
//
// after-passive: the WAL is restarted after every third PASSIVE
// checkpoint, with no reader and maxPages out of reach. Its unit test
// held it within restartPages (768) and 8 PASSIVEs' worth, 2,800 frames,
// but failed 9 runs in 23 at a load of 3 to 9. At 600 turns and a load
// of 13.7 the WAL held 5,728 frames with no RESTART at all: the
// checkpointer, behind, held its lock each time the writer looked, and
// only maxPages would have bounded the WAL. At a load of 7, two runs held
// 3,267 frames (one RESTART in five PASSIVEs) and 5,728 (none).
//
// reader: small limits, and a reader loading the table all along, which
// holds old frames and makes the RESTART give up at times. The WAL stays
// within a few times maxPages (128): 534 frames at 600 turns and a load
// of 13.7, 387 and 632 at a load of 7; its unit test failed at 4.2 times
// on a loaded machine.
func BenchmarkWALHeld(b *testing.B) {
	for _, bc := range []struct {
		name   string
		limits checkpointLimits
		reader bool
	}{
		{"after-passive", checkpointLimits{pages: 256, restartPages: 768, maxPages: 1 << 30}, false},
		{"reader", checkpointLimits{pages: 32, restartPages: 96, maxPages: 128}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d, path := openWithLimits(b, bc.limits)
			seen := checkpointsSeen(d)
			st := fightingState(b)
			mustCreateTable(b, d, "t1", st)
			truncateWAL(b, d, path)
			stop := make(chan struct{})
			var readers sync.WaitGroup
			if bc.reader {
				readers.Add(1)
				go func() {
					defer readers.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := d.LoadTable(context.Background(), "t1"); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			var seq, held int64
			for i := 1; b.Loop(); i++ {
				if err := d.Commit(context.Background(), benchTurn(&st, i, &seq)); err != nil {
					b.Fatal(err)
				}
				held = max(held, walSize(b, path))
			}
			close(stop)
			readers.Wait()
			b.ReportMetric(float64(held/walFrameBytes), "wal-max-frames")
			if got := seen(); got["passive"] > 0 {
				b.ReportMetric(float64(got["restart"])/float64(got["passive"]), "restarts/passive")
			}
		})
	}
}
