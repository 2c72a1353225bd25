package db

import (
	"context"
	"errors"
	"strings"
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
