package db

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The write path's benchmarks: a turn and the archive of the
// history it fills, an action's states, the model call log. Messages are
// about 1.5 KB, the size of a turn's user message with its state block.

const (
	archiveEvery = 4    // turns between two archives, each of that many turns
	benchBody    = 1500 // bytes of a benchmark message
)

// benchTurn is turn i of a table: its state, built on a clone of *st (which
// it then replaces, as the hub does), four events and two messages.
func benchTurn(st **engine.State, i int, seq *int64) store.Commit {
	next := (*st).Clone()
	*st = next
	next.Game.Turn = i
	next.Party[0].HP = i % 20
	c := turnCommit("t1", engine.AgentNarrative, i, benchBody)
	c.State = next
	for range 4 {
		*seq++
		c.Events = append(c.Events, engine.Event{Seq: *seq, TS: t0, Kind: "dice", Data: raw(map[string]any{"total": 12})})
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
// wrote it before the group-commit writer.
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
		if err := d.Commit(ctx, benchTurn(&st, i, &seq)); err != nil {
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
		c := benchTurn(&st, i, &seq)
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
				c := benchTurn(&st, n, &seq)
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

// BenchmarkCommitSay measures what a say costs the store: one chat event,
// no state, history or action (a fan-out run commits one a second per
// table), each in a transaction of its own, as says spread over a second
// are. cpu-ns/say is the CPU time of the process, wal-pages/say the pages
// the writer put in the WAL.
func BenchmarkCommitSay(b *testing.B) { benchmarkSays(b, 0) }

// BenchmarkCommitSayApart is BenchmarkCommitSay with the says quietFor
// apart, as a fan-out run's come: each finds the writer idle and is
// applied by its caller (applyNow). Its CPU per say includes the timer
// that spaces them. With applyNow removed, every say queued to the writer
// goroutine, a say cost about a fifth more CPU: 124 → 150 µs and 135 →
// 161 µs (medians of 18 runs each, in two sets of six alternated pairs,
// load average 6 to 16; 11 pairs of 12 worse). That is well past the 5 %
// a second way into the writer must buy, so applyNow stays.
func BenchmarkCommitSayApart(b *testing.B) { benchmarkSays(b, quietFor) }

// benchmarkSays commits one chat line at a time, apart from the last by
// at least gap, and reports the CPU and WAL pages per say.
func benchmarkSays(b *testing.B, gap time.Duration) {
	d := MustOpenDB(b)
	ctx := context.Background()
	mustCreateTable(b, d, "t1", fightingState(b))
	pages := d.checkpointer.total.Load()
	cpu := processCPU(b)
	says := 0
	for seq := int64(1); b.Loop(); seq++ {
		if gap > 0 {
			time.Sleep(gap)
		}
		ev := engine.Event{Seq: seq, TS: t0, Kind: engine.EventChat, Turn: "t3",
			Data: raw(map[string]any{"player_id": "p1", "name": "Aldric", "text": "Anyone seen the miller?"})}
		if err := d.Commit(ctx, store.Commit{TableID: "t1", Events: []engine.Event{ev}}); err != nil {
			b.Fatal(err)
		}
		says++
	}
	b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(says), "cpu-ns/say")
	b.ReportMetric(float64(d.checkpointer.total.Load()-pages)/float64(says), "wal-pages/say")
}

// playTables is how many tables BenchmarkPlayRound plays at once.
const playTables = 64

// playTable is one table of BenchmarkPlayRound: its state as last
// committed, its last event seq and its turns played.
type playTable struct {
	id    string
	st    *engine.State
	seq   int64
	turns int
	// archiving: every second turn archives the two turns before the last.
	archiving bool
}

// BenchmarkPlayRound commits one action at each of playTables tables at
// once, queued as the hub queues them, and reports the cost per action:
// its ack, then the turn that plays it (a new state with one character
// changed, five events, six history messages of about 850 bytes, the
// action resolved, two model calls), which is what a saturated play run
// asks of the group-commit writer per action. The state of each
// commit is a new clone, as the hub makes it. wal-pages/action are the
// pages the writer put in the WAL, cpu-ns/action the CPU time of the
// process (the benchmark's building of the commits included).
func BenchmarkPlayRound(b *testing.B) { playRound(b, false) }

// BenchmarkPlayRoundArchiving is BenchmarkPlayRound with the archives of
// a play run: every second turn of a table carries the archive of the
// two turns before the last (twelve messages), about as often as a
// saturated play run archives.
func BenchmarkPlayRoundArchiving(b *testing.B) { playRound(b, true) }

func playRound(b *testing.B, archiving bool) {
	d := MustOpenDB(b)
	tables := make([]*playTable, playTables)
	for i := range tables {
		t := &playTable{id: fmt.Sprintf("t%d", i), st: fightingState(b), archiving: archiving}
		mustCreateTable(b, d, t.id, t.st)
		tables[i] = t
	}
	pages := d.checkpointer.total.Load()
	cpu := processCPU(b)
	actions := 0
	for b.Loop() {
		var wg sync.WaitGroup
		for _, t := range tables {
			for _, c := range t.play() {
				wg.Add(1)
				if err := d.Enqueue(context.Background(), c, func(err error) {
					if err != nil {
						b.Error(err)
					}
					wg.Done()
				}); err != nil {
					b.Fatal(err)
				}
			}
			actions++
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(actions), "ns/action")
	b.ReportMetric(float64((processCPU(b)-cpu).Nanoseconds())/float64(actions), "cpu-ns/action")
	b.ReportMetric(float64(d.checkpointer.total.Load()-pages)/float64(actions), "wal-pages/action")
}

// processCPU is the CPU time the process has used: on a loaded machine
// it varies less than the time a benchmark takes.
func processCPU(tb testing.TB) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// play returns the two commits of the table's next action: its ack and
// its turn.
func (t *playTable) play() []store.Commit {
	t.turns++
	n := t.turns
	id := fmt.Sprintf("a%d", n)
	t.seq++
	ack := store.Commit{TableID: t.id,
		AddPending: &engine.PendingAction{ID: id, PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k" + id, Text: "I swing at the goblin", CreatedAt: t0},
		Events: []engine.Event{{Seq: t.seq, TS: t0, Kind: engine.EventAction, Turn: fmt.Sprintf("t%d", n),
			Data: raw(map[string]any{"action_id": id, "player_id": "p1", "character_id": "c1", "text": "I swing at the goblin"})}},
	}
	st := t.st.Clone()
	st.Game.Turn = n
	st.Party[n%len(st.Party)].HP = n % 20
	t.st = st
	turn := store.Commit{TableID: t.id, State: st, Resolve: []string{id}}
	pad := strings.Repeat("x", 800)
	for i := range 6 {
		role := [2]string{"user", "assistant"}[i%2]
		turn.Messages = append(turn.Messages, store.AgentMessage{Agent: engine.AgentCombat, Turn: n,
			Body: json.RawMessage(fmt.Sprintf(`{"role":%q,"content":"Turn %d, part %d. %s"}`, role, n, i, pad))})
	}
	for i := range 5 {
		t.seq++
		turn.Events = append(turn.Events, engine.Event{Seq: t.seq, TS: t0, Kind: engine.EventDice, Turn: fmt.Sprintf("t%d", n),
			Data: raw(map[string]any{"actor": "c1", "roll": "1d20+3", "rolls": []int{i + 7}, "modifier": 3, "total": i + 10, "dc": 12, "success": i%2 == 0, "reason": "attack on the goblin"})})
	}
	turn.Calls = []store.LLMCall{benchCall(n), benchCall(n + 1)}
	turn.Calls[0].TableID, turn.Calls[1].TableID = t.id, t.id
	if t.archiving && n >= 4 && n%2 == 0 {
		turn.Archive = &store.Memory{Agent: engine.AgentCombat, FirstTurn: n - 3, LastTurn: n - 2,
			Title: fmt.Sprintf("Turns %d-%d", n-3, n-2), Summary: "The party fought the goblins at the mill.",
			Keywords: []string{"goblin", "mill"}, Source: "extractive"}
	}
	return []store.Commit{ack, turn}
}
