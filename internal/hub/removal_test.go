package hub

import (
	"context"
	"sync"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// recording is the real store, recording every commit the hub queues.
type recording struct {
	Store
	mu      sync.Mutex
	commits []store.Commit
}

func (r *recording) Enqueue(ctx context.Context, c store.Commit, done func(error)) error {
	r.mu.Lock()
	r.commits = append(r.commits, c)
	r.mu.Unlock()
	return r.Store.Enqueue(ctx, c, done)
}

// TestBanOfASeatedPlayerIsOneCommit: the ban, the seat it frees and the
// player_left event land together (store.SettingsChange): a crash between
// two commits left a banned player seated, or a seat freed without its
// ban.
func TestBanOfASeatedPlayerIsOneCommit(t *testing.T) {
	ctx := context.Background()
	rec := &recording{}
	h, _ := testHub(t, func(c *Config) { rec.Store = c.Store; c.Store = rec })
	owner, bob := engine.Player{ID: "p-owner", Name: "Olga"}, engine.Player{ID: "p-bob", Name: "Bob"}
	sum, err := h.CreateTable(ctx, owner, TableSpec{Name: "Ban table"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sit(ctx, sum.ID, bob, engine.NewCharacterSpec{Name: "Brom", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Ban(ctx, sum.ID, owner, bob.ID); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var bans, removals []store.Commit
	for _, c := range rec.commits {
		if c.Settings != nil && c.Settings.Ban == bob.ID {
			bans = append(bans, c)
		}
		if c.RemoveSeat != "" {
			removals = append(removals, c)
		}
	}
	if len(bans) != 1 || len(removals) != 1 {
		t.Fatalf("%d commits carry the ban and %d free a seat, want one that does both", len(bans), len(removals))
	}
	c := bans[0]
	if c.RemoveSeat != "1" {
		t.Errorf("the ban's commit frees seat %q, want Bob's seat 1", c.RemoveSeat)
	}
	left := false
	for _, ev := range c.Events {
		if d, ok := ev.Data.(engine.PlayerLeftData); ok && d.PlayerID == bob.ID && d.By == ByOwner {
			left = true
		}
	}
	if !left {
		t.Errorf("the ban's commit has no player_left of Bob: %+v", c.Events)
	}
	if err := h.Visible(ctx, sum.ID, Viewer{PlayerID: bob.ID}); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("Visible to the banned Bob = %v, want EFORBIDDEN", err)
	}
}
