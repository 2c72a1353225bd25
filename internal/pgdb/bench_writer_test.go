package pgdb_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// BenchmarkCommitChatFenced: chat lines on 16 tables of one cluster node,
// committed concurrently (one caller per table, as the hub does), each
// transaction fenced. It reports the commit latency's p50 and p99 beside
// ns/op.
func BenchmarkCommitChatFenced(b *testing.B) { benchmarkChat(b, 16) }

// BenchmarkCommitChatFencedAlone: the same on one table, one commit per
// transaction: its latency is the transaction's.
func BenchmarkCommitChatFencedAlone(b *testing.B) { benchmarkChat(b, 1) }

func benchmarkChat(b *testing.B, tables int) {
	dbs, _ := cluster(b, 1, nil)
	d := dbs[0]
	for i := range tables {
		newTable(b, d, fmt.Sprintf("t%02d", i))
	}
	var next atomic.Int64
	var mu sync.Mutex
	var waits []time.Duration
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("t%02d", i)
			var mine []time.Duration
			for seq := int64(1); next.Add(1) <= int64(b.N); seq++ {
				ev := engine.ChatEvent(engine.Player{ID: "p1", Name: "Ann"}, "hello")
				ev.Seq, ev.TS = seq, at
				start := time.Now()
				if err := d.Commit(ctx, store.Commit{TableID: id, Events: []engine.Event{ev}}); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			waits = append(waits, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	if len(waits) == 0 {
		return
	}
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "p99-µs")
}
