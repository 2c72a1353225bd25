package pgdb_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// BenchmarkCommitTurnsFenced: the commits of played turns on 16 tables of
// one cluster node, each table its own caller (as the hub's tables are):
// per turn, the action's receipt (its ack waits for it), then the turn
// with its state, events, four history messages, the action resolved and
// a save point; every fourth turn also archives the narrator's history. It
// reports the receipt's and the turn's commit latency, p50 and p99.
func BenchmarkCommitTurnsFenced(b *testing.B) {
	const tables = 16
	dbs, _ := cluster(b, 1, nil)
	d := dbs[0]
	states := make([]*engine.State, tables)
	for i := range tables {
		newTable(b, d, fmt.Sprintf("t%02d", i))
		st, err := d.LoadTable(ctx, fmt.Sprintf("t%02d", i))
		if err != nil {
			b.Fatal(err)
		}
		states[i] = st.State
	}
	body := json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":%q}`, strings.Repeat("The mill wheel turns. ", 45)))
	var next atomic.Int64
	var mu sync.Mutex
	var acks, turns []time.Duration
	var wg sync.WaitGroup
	b.ResetTimer()
	for i := range tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, st := fmt.Sprintf("t%02d", i), states[i]
			var myAcks, myTurns []time.Duration
			seq := int64(0)
			for turn := 1; next.Add(1) <= int64(b.N); turn++ {
				a := engine.PendingAction{ID: fmt.Sprintf("a%d", turn), PlayerID: "p1", ClientID: fmt.Sprintf("c%d", turn), Text: "I look around.", CreatedAt: at}
				start := time.Now()
				if err := d.Commit(ctx, store.Commit{TableID: id, AddPending: &a}); err != nil {
					b.Error(err)
					return
				}
				myAcks = append(myAcks, time.Since(start))
				before, _ := json.Marshal(st)
				nextSt := st.Clone()
				nextSt.Game.Turn = turn
				var evs []engine.Event
				for range 3 {
					seq++
					ev := engine.NewEvent(engine.NarrationData{Agent: engine.AgentNarrative, Text: "The wheel turns."})
					ev.Seq, ev.TS = seq, at
					evs = append(evs, ev)
				}
				msgs := make([]store.AgentMessage, 4)
				for k := range msgs {
					msgs[k] = store.AgentMessage{Agent: engine.AgentNarrative, Turn: turn, Body: body}
				}
				c := store.Commit{TableID: id, State: nextSt, Events: evs, Messages: msgs, Resolve: []string{a.ID},
					Owner: &store.OwnerChange{Save: &store.SavePoint{Turn: turn, Action: a, FromSeq: seq - 2, State: before}}}
				if turn%4 == 0 {
					c.Archive = &store.Memory{Agent: engine.AgentNarrative, LastTurn: turn - 2, Title: "The mill"}
				}
				start = time.Now()
				if err := d.Commit(ctx, c); err != nil {
					b.Error(err)
					return
				}
				myTurns = append(myTurns, time.Since(start))
				st = nextSt
			}
			mu.Lock()
			acks, turns = append(acks, myAcks...), append(turns, myTurns...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	b.StopTimer()
	report := func(ds []time.Duration, name string) {
		if len(ds) == 0 {
			return
		}
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), name+"-p50-µs")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), name+"-p99-µs")
	}
	report(acks, "ack")
	report(turns, "turn")
}
