package db

import (
	"context"
	"testing"
	"time"

	"tavern/internal/engine"
)

func TestPlayers(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	ann := engine.Player{ID: "p1", Name: "Ann", CreatedAt: t0.Add(123456789 * time.Nanosecond)}
	if err := d.CreatePlayer(ctx, ann, []byte{0, 1, 2}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreatePlayer(ctx, engine.Player{ID: "p2", Name: "Bo", CreatedAt: t0}, []byte{0, 1, 3}); err != nil {
		t.Fatal(err)
	}

	got, err := d.PlayerByTokenHash(ctx, []byte{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if got != ann {
		t.Errorf("by token = %+v, want %+v", got, ann)
	}
	if got, err := d.Player(ctx, "p2"); err != nil || got.Name != "Bo" {
		t.Errorf("Player(p2) = %+v, %v", got, err)
	}

	_, err = d.PlayerByTokenHash(ctx, []byte{0, 1})
	wantCode(t, err, engine.ENOTFOUND)
	_, err = d.Player(ctx, "p3")
	wantCode(t, err, engine.ENOTFOUND)
	wantCode(t, d.CreatePlayer(ctx, engine.Player{ID: "p1", Name: "Again"}, []byte{9}), engine.ECONFLICT)
	wantCode(t, d.CreatePlayer(ctx, engine.Player{ID: "p9", Name: "Same token"}, []byte{0, 1, 3}), engine.ECONFLICT)
	wantCode(t, d.CreatePlayer(ctx, engine.Player{ID: "p9", Name: "No token"}, nil), engine.EINVALID)
	if got, _ := d.Player(ctx, "p1"); got.Name != "Ann" {
		t.Errorf("conflicting create changed p1: %+v", got)
	}
}
