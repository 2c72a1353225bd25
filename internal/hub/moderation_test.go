package hub_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// TestPausedSurvivesRestart: a paused table comes back paused, with its
// waiting action still waiting, and a closed table stays out of the lobby.
func TestPausedSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	open := func() (*hub.Hub, *db.DB) {
		store, err := db.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		h := hub.New(hub.Config{Store: store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
			Runner: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}},
			Log:    slog.New(slog.DiscardHandler), Seed: func() uint64 { return 7 }, ShutdownGrace: 2 * time.Second})
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return h, store
	}
	h, store := open()
	owner := engine.Player{ID: "p-owner", Name: "Owner"}
	paused, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Paused"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Closed"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Pause(ctx, paused.ID); err != nil {
		t.Fatal(err)
	}
	// Paused: a backstory's session start waits instead of playing.
	if _, err := h.Sit(ctx, paused.ID, owner, engine.NewCharacterSpec{Name: "Aldric", Backstory: "A miller's son."}); err != nil {
		t.Fatal(err)
	}
	if err := h.CloseTable(ctx, closed.ID); err != nil {
		t.Fatal(err)
	}
	_ = h.Close()
	_ = store.Close()

	h, store = open()
	defer store.Close()
	defer h.Close()
	snap, err := h.Snapshot(ctx, paused.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Paused || len(snap.Pending) != 1 || snap.Pending[0].State != "pending" {
		t.Errorf("after restart: paused %v pending %+v", snap.Paused, snap.Pending)
	}
	for _, s := range h.List() {
		if s.ID == closed.ID {
			t.Error("the closed table is back in the lobby")
		}
	}
	rows, err := h.AdminTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[1].Closed || rows[1].ID != closed.ID || !rows[0].Paused {
		t.Errorf("admin rows %+v", rows)
	}
	// Resumed, the waiting session start plays.
	evs, err := h.Subscribe(ctx, paused.ID, snap.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Resume(ctx, paused.ID); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-evs:
			if e.Kind == engine.EventNarration {
				return
			}
		case <-timeout:
			t.Fatal("no narration after resume")
		}
	}
}
