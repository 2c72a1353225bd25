package db

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// bigAck is an act's commit whose event needs new pages of the file.
func bigAck(table string, n int64) store.Commit {
	c := ack(table, n, "big"+string(rune('a'+n)))
	c.Events[0].Data = raw(map[string]any{"text": strings.Repeat("x", 64<<10)})
	return c
}

// TestFullStoreHoldsAndRecovers fills the file (a cap on its pages fails
// writes as a full disk does) under a queued commit: the commit is not
// answered while the store cannot write, the store says why, a new commit
// is refused as unavailable at once, and once the cap is lifted the queued
// commit lands and the store is writable again.
func TestFullStoreHoldsAndRecovers(t *testing.T) {
	ctx := context.Background()
	d := MustOpenDB(t)
	mustCreateTable(t, d, "t1", newState(t, "d100"))
	pages, err := d.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.SetMaxPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	if err := d.Enqueue(ctx, bigAck("t1", 1), func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	for d.Unavailable() == nil {
		select {
		case err := <-done:
			t.Fatalf("the commit was answered (%v) by a full store", err)
		default:
		}
	}
	if !strings.Contains(d.Unavailable().Error(), "full") {
		t.Errorf("Unavailable() = %v, want the full disk named", d.Unavailable())
	}
	select {
	case err := <-done:
		t.Fatalf("the commit was answered (%v) while the store cannot write", err)
	default:
	}
	err = d.Enqueue(ctx, bigAck("t1", 2), func(error) { t.Error("a refused commit was answered") })
	if !errors.Is(err, store.ErrUnavailable) || engine.ErrorCode(err) != engine.EUNAVAILABLE {
		t.Fatalf("Enqueue on a full store = %v, want store.ErrUnavailable", err)
	}
	if err := d.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the queued commit, once the disk has room = %v", err)
	}
	if err := d.Unavailable(); err != nil {
		t.Errorf("Unavailable() after the commit landed = %v", err)
	}
	evs, err := d.Events(ctx, "t1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Seq != 1 {
		t.Errorf("events after recovery = %d, want the queued commit's one", len(evs))
	}
	if err := d.Commit(ctx, bigAck("t1", 3)); err != nil {
		t.Errorf("a commit after recovery = %v", err)
	}
}

// TestHealthKeepsTheNewestOutcome: writes record their outcome after they
// let the writer go, so a failure may be recorded after a later success.
// The older outcome must not make the store unavailable again, nor an
// older success clear a newer failure.
func TestHealthKeepsTheNewestOutcome(t *testing.T) {
	full := fmt.Errorf("write: %w", syscall.ENOSPC)
	var h health
	if err := h.wrote(2, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.wrote(1, full); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("wrote(1, full) = %v, want store.ErrUnavailable for its caller", err)
	}
	if f := h.fault.Load(); f != nil {
		t.Errorf("a failure older than the last success left the store unavailable: %v", f.err)
	}
	if err := h.wrote(4, full); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("wrote(4, full) = %v", err)
	}
	if err := h.wrote(3, nil); err != nil {
		t.Fatal(err)
	}
	if h.fault.Load() == nil {
		t.Error("a success older than the last failure made the store writable")
	}
	if err := h.wrote(5, nil); err != nil || h.fault.Load() != nil {
		t.Errorf("a newer success = %v, fault %v; want the store writable", err, h.fault.Load())
	}
}
