package hub

import (
	"context"
	"sync/atomic"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// countingOwnerData is the real store, counting its OwnerData reads.
type countingOwnerData struct {
	Store
	reads atomic.Int32
}

func (c *countingOwnerData) OwnerData(ctx context.Context, id string) (store.OwnerData, error) {
	c.reads.Add(1)
	return c.Store.OwnerData(ctx, id)
}

// TestRetconRestoresWhispersWithoutTheStore: the whisper an undone turn
// read waits again for the next turn, in memory as in the store, and the
// retcon reads nothing from the store while it holds the table goroutine.
func TestRetconRestoresWhispersWithoutTheStore(t *testing.T) {
	ctx := context.Background()
	cs := &countingOwnerData{}
	h, st := testHub(t, func(c *Config) { cs.Store = c.Store; c.Store = cs })
	owner := engine.Player{ID: "p-owner", Name: "Olga"}
	sum, err := h.CreateTable(ctx, owner, TableSpec{Name: "Whispers"})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := h.table(sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = tb.call(ctx, func() error {
		w := &store.Whisper{Text: "Let it rain.", By: owner.ID, CreatedAt: h.cfg.Now().UTC()}
		if err := tb.commit(ctx, store.Commit{Owner: &store.OwnerChange{AddWhisper: w}}, ""); err != nil {
			return err
		}
		tb.own.whispers = append(tb.own.whispers, *w)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sit(ctx, sum.ID, owner, engine.NewCharacterSpec{Name: "Wren", Class: "rogue"}); err != nil {
		t.Fatal(err)
	}
	settle(t, h, sum.ID) // the arrival's turn reads the whisper
	waiting := func() (mem []store.Whisper) {
		t.Helper()
		if err := tb.call(ctx, func() error { mem = tb.own.whispers; return nil }); err != nil {
			t.Fatal(err)
		}
		return mem
	}
	if w := waiting(); len(w) != 0 {
		t.Fatalf("whispers still waiting after the turn that read them: %+v", w)
	}
	cs.reads.Store(0)
	if _, err := h.Retcon(ctx, sum.ID, owner, RetconDrop); err != nil {
		t.Fatal(err)
	}
	if n := cs.reads.Load(); n != 0 {
		t.Errorf("the retcon read the owner's data from the store %d times", n)
	}
	mem := waiting()
	d, err := st.OwnerData(ctx, sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(mem) != 1 || len(d.Whispers) != 1 || mem[0].ID != d.Whispers[0].ID || mem[0].Text != "Let it rain." || mem[0].UsedTurn != 0 {
		t.Errorf("after the retcon the table has %+v waiting, the store %+v", mem, d.Whispers)
	}
}
