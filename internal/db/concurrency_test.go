package db

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// TestReadersWhileWriterCommits runs readers against a table while turns
// commit. Each turn bumps Game.Turn, a PC's XP and the event seq together,
// so a reader that does not see one snapshot would see them disagree. Run
// under -race.
func TestReadersWhileWriterCommits(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	st.Game.Turn = 0
	mustCreateTable(t, d, "t1", st)

	const turns = 40
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for r := range 6 { // more readers than the read pool has connections
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				td, err := d.LoadTable(ctx, "t1")
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				turn := td.State.Game.Turn
				if td.Seq != int64(turn) || td.State.Party[0].XP != turn {
					errs <- fmt.Errorf("reader %d: torn read: turn %d, seq %d, xp %d", r, turn, td.Seq, td.State.Party[0].XP)
					return
				}
				evs, err := d.Events(ctx, "t1", 0, turns+10)
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
				if int64(len(evs)) < td.Seq {
					errs <- fmt.Errorf("reader %d: %d events after seeing seq %d", r, len(evs), td.Seq)
					return
				}
				reads.Add(1)
			}
		}()
	}

	for i := 1; i <= turns; i++ {
		st.Game.Turn = i
		st.Party[0].XP = i
		c := store.Commit{TableID: "t1", State: st,
			Events: []engine.Event{{Seq: int64(i), TS: t0.Add(time.Duration(i)), Kind: "narration"}}}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads.Load() == 0 {
		t.Errorf("no read completed while the writer ran")
	}
	td := mustLoad(t, d, "t1")
	assertSameState(t, td.State, st)
	if td.Seq != turns {
		t.Errorf("seq = %d, want %d", td.Seq, turns)
	}
}

// BenchmarkCommitTurn measures a typical turn: a whole state, a few events
// and two messages.
func BenchmarkCommitTurn(b *testing.B) {
	d := MustOpenDB(b)
	ctx := context.Background()
	st := fightingState(b)
	mustCreateTable(b, d, "t1", st)
	var seq int64
	for i := 0; b.Loop(); i++ {
		st = st.Clone() // Commit's contract: a new state on a clone
		st.Game.Turn = i
		st.Party[0].HP = i % 20
		var evs []engine.Event
		for range 4 {
			seq++
			evs = append(evs, engine.Event{Seq: seq, TS: t0, Kind: "dice", Data: raw(map[string]any{"total": 12})})
		}
		if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st, Events: evs, Messages: []store.AgentMessage{
			{Agent: engine.AgentCombat, Turn: i, Body: []byte(`{"role":"user","content":"I attack"}`)},
			{Agent: engine.AgentCombat, Turn: i, Body: []byte(`{"role":"assistant","content":"Steel rings."}`)},
		}}); err != nil {
			b.Fatal(err)
		}
	}
}
