package db

import (
	"context"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// TestAdventureWorldsRoundTrip: shops, encounters, keys and traps come
// back with a table's state, for every built-in adventure.
func TestAdventureWorldsRoundTrip(t *testing.T) {
	for _, id := range library.IDs() {
		t.Run(id, func(t *testing.T) {
			adv, _ := library.Get(id)
			st := engine.NewState(engine.Config{TurnTimeoutS: 90}, adv, library.Catalogue, 3)
			want := st.Clone()
			d := MustOpenDB(t)
			mustCreateTable(t, d, "t1", st)
			assertSameState(t, mustLoad(t, d, "t1").State, want)
		})
	}
}

func TestAdventureStore(t *testing.T) {
	ctx := context.Background()
	d := MustOpenDB(t)
	p := engine.Player{ID: "p1", Name: "Ann", CreatedAt: t0}
	if err := d.CreatePlayer(ctx, p, []byte("h")); err != nil {
		t.Fatal(err)
	}
	a := store.Adventure{ID: "cellar", AuthorID: "p1", Title: "Cellar", Source: []byte("id: cellar\n"), CreatedAt: t0, UpdatedAt: t0}
	if err := d.CreateAdventure(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateAdventure(ctx, a); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("the same id twice: %v", err)
	}
	a.Title, a.Source, a.UpdatedAt = "Cellar II", []byte("id: cellar\nname: II\n"), t0.Add(time.Minute)
	if err := d.ReplaceAdventure(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := d.Adventure(ctx, "cellar")
	if err != nil || got.Title != "Cellar II" || string(got.Source) != string(a.Source) || got.AuthorName != "Ann" || !got.UpdatedAt.Equal(a.UpdatedAt) {
		t.Errorf("adventure = %+v, %v", got, err)
	}
	mustCreateTable(t, d, "t1", newState(t, ""))
	if err := d.KeepTableAdventure(ctx, "t1", "cellar", got.Source); err != nil {
		t.Fatal(err)
	}
	if err := d.KeepTableAdventure(ctx, "t-none", "cellar", got.Source); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("keep for no table: %v", err)
	}
	if err := d.HideAdventure(ctx, "cellar"); err != nil {
		t.Fatal(err)
	}
	if list, err := d.Adventures(ctx); err != nil || len(list) != 0 {
		t.Errorf("listed after hiding: %v, %v", list, err)
	}
	if id, src, err := d.TableAdventure(ctx, "t1"); err != nil || id != "cellar" || string(src) != string(a.Source) {
		t.Errorf("the table's copy: %s %q %v", id, src, err)
	}
	if err := d.HideAdventure(ctx, "nope"); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("hide nothing: %v", err)
	}
}
