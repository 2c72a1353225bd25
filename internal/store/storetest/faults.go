package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// FaultStore is a Store whose storage can fail: both engines say so
// (Unavailable) and can be told to stop retrying (StopRetries).
type FaultStore interface {
	Store
	Unavailable() error
	StopRetries()
}

// Faults opens a FaultStore and makes its storage refuse writes (Break:
// a full disk, a read-only database) and take them again (Heal).
type Faults struct {
	Open  func(t *testing.T) FaultStore
	Break func(t *testing.T, s FaultStore)
	Heal  func(t *testing.T, s FaultStore)
}

// RunFaults checks hub/storage.go's contract of a store that cannot
// write, on each engine: a commit it had taken is not answered while the
// storage refuses it, the store says why, a new commit is refused at once
// with store.ErrUnavailable, and once the storage heals the taken commit
// lands; StopRetries answers the taken commits ErrUnavailable instead.
func RunFaults(t *testing.T, f Faults) {
	t.Run("TakenCommitLandsOnceHealed", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		createTable(t, s, "t1", fightingState(t))
		f.Break(t, s)
		done := make(chan error, 1)
		if err := s.Enqueue(ctx, bigAct("t1", 1), func(err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		waitUnavailable(t, s, done)
		err := s.Enqueue(ctx, bigAct("t1", 2), func(error) { t.Error("a refused commit was answered") })
		if !errors.Is(err, store.ErrUnavailable) || engine.ErrorCode(err) != engine.EUNAVAILABLE {
			t.Fatalf("Enqueue while the store cannot write = %v, want store.ErrUnavailable", err)
		}
		select {
		case err := <-done:
			t.Fatalf("the taken commit was answered (%v) while the store cannot write", err)
		default:
		}
		f.Heal(t, s)
		if err := <-done; err != nil {
			t.Fatalf("the taken commit, once the storage heals = %v", err)
		}
		if err := s.Unavailable(); err != nil {
			t.Fatalf("Unavailable after a commit landed = %v", err)
		}
		evs, err := s.Events(ctx, "t1", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Seq != 1 {
			t.Fatalf("events after the retried commit: %d, want seq 1 alone", len(evs))
		}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: chat(2, 1)}); err != nil {
			t.Fatalf("a commit once healed = %v", err)
		}
	})
	t.Run("StopRetriesAnswers", func(t *testing.T) {
		s := f.Open(t)
		defer s.Close()
		createTable(t, s, "t1", fightingState(t))
		f.Break(t, s)
		done := make(chan error, 1)
		if err := s.Enqueue(ctx, bigAct("t1", 1), func(err error) { done <- err }); err != nil {
			t.Fatal(err)
		}
		waitUnavailable(t, s, done)
		s.StopRetries()
		if err := <-done; !errors.Is(err, store.ErrUnavailable) || engine.ErrorCode(err) != engine.EUNAVAILABLE {
			t.Fatalf("the taken commit after StopRetries = %v, want store.ErrUnavailable", err)
		}
		f.Heal(t, s)
	})
}

// bigAct is the ack of an act whose text is large enough to need new
// pages of a full file. An act always goes to the writer: neither engine
// applies it on its caller's goroutine.
func bigAct(table string, seq int64) store.Commit {
	text := strings.Repeat("x", 64<<10)
	id := fmt.Sprintf("a%d", seq)
	ev := engine.ChatEvent(engine.Player{ID: "p1", Name: "Ann"}, text)
	ev.Seq, ev.TS = seq, at.Add(time.Duration(seq)*time.Second)
	p := engine.PendingAction{ID: id, PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k" + id, Text: text, CreatedAt: at}
	return store.Commit{TableID: table, Events: []engine.Event{ev}, AddPending: &p}
}

// waitUnavailable waits until s says it cannot write, failing if done
// hears back first.
func waitUnavailable(t *testing.T, s FaultStore, done <-chan error) {
	t.Helper()
	for s.Unavailable() == nil {
		select {
		case err := <-done:
			t.Fatalf("the commit was answered (%v) by a store that cannot write", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
