package db

import (
	"context"
	"testing"

	"tavern/internal/store"
)

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
