package hub

import (
	"context"
	"errors"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// failingOwnerData is the real store whose OwnerData fails.
type failingOwnerData struct{ Store }

func (failingOwnerData) OwnerData(context.Context, string) (store.OwnerData, error) {
	return store.OwnerData{}, errors.New("disk I/O error")
}

// TestLoadFailsWithoutTheOwnersData: a table whose notes, whispers and
// save points cannot be read does not load, as when its bans cannot be:
// it does not play on without them (the DM would forget the notes).
func TestLoadFailsWithoutTheOwnersData(t *testing.T) {
	ctx := context.Background()
	h, st := testHub(t, nil)
	owner := engine.Player{ID: "p-owner", Name: "Olga"}
	sum, err := h.CreateTable(ctx, owner, TableSpec{Name: "Notes"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.AddNote(ctx, sum.ID, owner, "The mill burns."); err != nil {
		t.Fatal(err)
	}
	h.Close()

	h2, _ := testHub(t, func(c *Config) { c.Store = failingOwnerData{st} })
	if _, err := h2.Snapshot(ctx, sum.ID); err == nil {
		t.Error("the table loaded without its notes")
	}
	h3, _ := testHub(t, func(c *Config) { c.Store = st })
	s, err := h3.Snapshot(ctx, sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Notes) != 1 || s.Notes[0].Text != "The mill burns." {
		t.Errorf("notes once the store reads: %+v", s.Notes)
	}
}
