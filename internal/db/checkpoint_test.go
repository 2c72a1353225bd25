package db

import (
	"context"
	"database/sql"
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

// TestWALStaysBounded commits a stream of turns while a reader keeps reading
// the table, with SQLite's automatic checkpoints off: the checkpointer and
// the writer's RESTART keep the WAL (whose file only grows until a
// checkpoint truncates it) within a small multiple of maxPages, however
// long the checkpointer's fsyncs take, where without them it would hold
// nearly every page the stream wrote.
func TestWALStaysBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	limits := checkpointLimits{pages: 32, restartPages: 96, maxPages: 128}
	d, err := open(context.Background(), path, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)

	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 1 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.LoadTable(ctx, "t1"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	const turns = 300
	var seq int64
	for i := 1; i <= turns; i++ {
		if err := d.Commit(ctx, benchTurn(&st, i, &seq)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	readers.Wait()

	written := count(t, d.reader, "SELECT count(*) FROM events WHERE table_id = 't1'")
	if written != turns*4 {
		t.Fatalf("%d events, want %d", written, turns*4)
	}
	// A turn writes about 11 pages (3,300 in all): without the writer's
	// RESTART the WAL holds most of them; with it, a few hundred (more
	// on a loaded machine, where the reader holds each snapshot longer:
	// 4 × maxPages failed 1 run in 20 there, on a WAL of 4.2 ×).
	if bound := 6 * limits.maxPages * walFrameBytes; walSize(t, path) > bound {
		t.Errorf("WAL is %d bytes after %d turns, want at most %d", walSize(t, path), turns, bound)
	}
}

// TestWALRestartsOnceLong: the writer restarts the WAL after the PASSIVE
// checkpoint that finds it restartPages long, so with no reader holding
// old frames the WAL stays within about that, although maxPages (the
// fallback) is never reached; without the restart it would hold every
// page the turns wrote. It restarts after every third PASSIVE only (with
// pages a third of restartPages): each RESTART holds up every commit.
func TestWALRestartsOnceLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	limits := checkpointLimits{pages: 256, restartPages: 768, maxPages: 1 << 30}
	d, err := open(context.Background(), path, limits)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var mu sync.Mutex
	seen := map[string]int{} // finished checkpoints by mode
	d.ObserveWrites(WriteObserver{Checkpoint: func(mode string, took time.Duration, finished bool) {
		mu.Lock()
		defer mu.Unlock()
		if finished && took > 0 {
			seen[mode]++
		}
	}})
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	const turns = 600 // about 11 pages each
	var seq int64
	for i := 1; i <= turns; i++ {
		if err := d.Commit(context.Background(), benchTurn(&st, i, &seq)); err != nil {
			t.Fatal(err)
		}
	}
	written := d.checkpointer.total.Load()
	if written < 20*limits.pages {
		t.Fatalf("the turns wrote %d pages: too few to tell", written)
	}
	// The checkpointer runs behind the writer (its goroutine, fsyncs), so
	// allow it several checkpoints' worth.
	// Without the RESTART it would hold every page written (23 MiB here);
	// restartPages and 8 PASSIVEs' worth is 11 MiB (4 failed 1 run of
	// make test's -race on a loaded machine, with 7.7 of 7.4 MiB).
	if bound := (limits.restartPages + 8*limits.pages) * walFrameBytes; walSize(t, path) > bound {
		t.Errorf("WAL is %d bytes after %d pages written, want at most %d", walSize(t, path), written, bound)
	}
	// The observer hears of both kinds (the metrics' store checkpoints),
	// and the RESTARTs are a third as many as the PASSIVE ones, or fewer
	// (a PASSIVE catches up before a RESTART).
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d pages written; checkpoints: %v", written, seen)
	if seen["passive"] == 0 || seen["restart"] == 0 || seen["restart"]*2 > seen["passive"] {
		t.Errorf("observed finished checkpoints %v, want passive ones and a third as many restart ones", seen)
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
