package db

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The write path's benchmarks (issue 12): a turn and the archive of the
// history it fills, an action's states, the model call log. Messages are
// about 1.5 KB, the size of a turn's user message with its state block.

const (
	archiveEvery = 4    // turns between two archives, each of that many turns
	benchBody    = 1500 // bytes of a benchmark message
)

// benchTurn is turn i of a table: its state, four events and two messages.
func benchTurn(st *engine.State, i int, seq *int64) store.Commit {
	st.Game.Turn = i
	st.Party[0].HP = i % 20
	c := turnCommit("t1", engine.AgentNarrative, i, benchBody)
	c.State = st
	for range 4 {
		*seq++
		c.Events = append(c.Events, engine.Event{Seq: *seq, TS: t0, Kind: "dice", Data: map[string]any{"total": 12}})
	}
	return c
}

// benchArchive is the archive turn i makes, if any: the block of the
// archiveEvery turns that ended archiveEvery turns before it.
func benchArchive(i int) *store.Memory {
	if i%archiveEvery != 0 || i < 2*archiveEvery {
		return nil
	}
	last := i - archiveEvery
	return &store.Memory{TableID: "t1", Agent: engine.AgentNarrative, FirstTurn: last - archiveEvery + 1, LastTurn: last,
		Title: fmt.Sprintf("Turns up to %d", last), Summary: "The party went to the mill and met Snikket the goblin.",
		Keywords: []string{"mill", "Snikket"}, Source: "extractive"}
}

// BenchmarkTurnThenArchive measures a turn's commit and, every
// archiveEvery turns, the archive in a transaction of its own, as the hub
// wrote it before issue 12's write path.
func BenchmarkTurnThenArchive(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	st := fightingState(b)
	mustCreateTable(b, d, "t1", st)
	var seq int64
	for i := 1; b.Loop(); i++ {
		if m := benchArchive(i); m != nil {
			if _, err := d.ArchiveHistory(ctx, *m); err != nil {
				b.Fatal(err)
			}
		}
		if err := d.Commit(ctx, benchTurn(st, i, &seq)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTurnWithArchive is BenchmarkTurnThenArchive with each archive
// carried by its turn's commit: one transaction.
func BenchmarkTurnWithArchive(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	st := fightingState(b)
	mustCreateTable(b, d, "t1", st)
	var seq int64
	for i := 1; b.Loop(); i++ {
		c := benchTurn(st, i, &seq)
		c.Archive = benchArchive(i)
		if err := d.Commit(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActionStateEach measures one action state written and waited
// for: what the table goroutine paid at each change of an action's state.
func BenchmarkActionStateEach(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	mustCreateTable(b, d, "t1", fightingState(b))
	if err := d.Commit(ctx, ack("t1", 1, "k1")); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		if err := d.SetActionState(ctx, "t1", store.ActionLife{ActionID: "a1", State: store.ActionRunning, Attempts: i}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActionStateQueued queues action states as the table goroutine
// now does; the writer writes them in the background, and the last is
// flushed by a commit.
func BenchmarkActionStateQueued(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	mustCreateTable(b, d, "t1", fightingState(b))
	if err := d.Commit(ctx, ack("t1", 1, "k1")); err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		d.QueueActionState("t1", store.ActionLife{ActionID: "a1", State: store.ActionRunning, Attempts: i})
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1"}); err != nil {
		b.Fatal(err)
	}
}

// benchCalls is how many model calls one iteration of the call log
// benchmarks logs: what a busy server's CallWriter finds queued.
const benchCalls = 16

func benchCall(i int) store.LLMCall {
	return store.LLMCall{TableID: "t1", Agent: "narrative", Model: "offline", Started: t0, LatencyMS: 12, PromptTokens: 900 + i, CompletionTokens: 80}
}

// BenchmarkLogCallEach logs benchCalls model calls, one transaction each.
func BenchmarkLogCallEach(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	for b.Loop() {
		for i := range benchCalls {
			if err := d.LogCall(ctx, benchCall(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkLogCallsBatch logs benchCalls model calls in one batch, as the
// CallWriter now hands them over.
func BenchmarkLogCallsBatch(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	for b.Loop() {
		calls := make([]store.LLMCall, 0, benchCalls)
		for i := range benchCalls {
			calls = append(calls, benchCall(i))
		}
		if err := d.LogCalls(ctx, calls); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcksBehindTurns commits acks at 16 tables while 16 (or 64)
// others commit turns without pause, as a loaded server does, and reports
// the acks' latency (p50, p99): how long an ack waits for the turns queued
// with it.
func BenchmarkAcksBehindTurns(b *testing.B) {
	for _, turnTables := range []int{16, 64} {
		b.Run(fmt.Sprintf("turns=%d", turnTables), func(b *testing.B) { benchAcksBehindTurns(b, turnTables) })
	}
}

func benchAcksBehindTurns(b *testing.B, turnTables int) {
	d := MustOpenDB(b)
	ctx := context.Background()
	const tables = 16
	var turns sync.WaitGroup
	stop := make(chan struct{})
	for i := range turnTables {
		id := fmt.Sprintf("turns%d", i)
		st := fightingState(b)
		mustCreateTable(b, d, id, st)
		turns.Add(1)
		go func() {
			defer turns.Done()
			var seq int64
			for n := 1; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				c := benchTurn(st, n, &seq)
				c.TableID = id
				if err := d.Commit(ctx, c); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for i := range tables {
		mustCreateTable(b, d, fmt.Sprintf("acks%d", i), fightingState(b))
	}
	var mu sync.Mutex
	var waits []time.Duration
	var n atomic.Int64
	b.SetParallelism(tables / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := n.Add(1)
			start := time.Now()
			if err := d.Commit(ctx, ack(fmt.Sprintf("acks%d", k%tables), k, fmt.Sprintf("k%d", k))); err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			waits = append(waits, time.Since(start))
			mu.Unlock()
		}
	})
	b.StopTimer()
	close(stop)
	turns.Wait()
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "p99-µs")
}
