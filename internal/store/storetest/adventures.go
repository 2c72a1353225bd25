package storetest

import (
	"context"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// AdventureStore is a Store that also keeps the adventures players write
// (PROTOCOL.md "Adventures"): what adventures.Store asks of db.DB and
// pgdb.DB.
type AdventureStore interface {
	Store
	CreateAdventure(ctx context.Context, a store.Adventure) error
	ReplaceAdventure(ctx context.Context, a store.Adventure) error
	HideAdventure(ctx context.Context, id string) error
	Adventure(ctx context.Context, id string) (store.Adventure, error)
	Adventures(ctx context.Context) ([]store.Adventure, error)
	AdventureTables(ctx context.Context) (map[string]int, error)
	AdventureTableCount(ctx context.Context, id string) (int, error)
	KeepTableAdventure(ctx context.Context, tableID, adventureID string, source []byte) error
	TableAdventure(ctx context.Context, tableID string) (string, []byte, error)
}

// RunAdventures runs the adventure cases of the suite; open returns a
// new, empty store for one test (the suite closes it).
func RunAdventures(t *testing.T, open func(t *testing.T) AdventureStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s AdventureStore)
	}{
		{"AdventureWorlds", testAdventureWorlds},
		{"Adventures", testAdventures},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

// testAdventureWorlds: shops, encounters, keys and traps come back with a
// table's state, for every built-in adventure, also after a turn (which
// need not write them again).
func testAdventureWorlds(t *testing.T, s AdventureStore) {
	for _, id := range library.IDs() {
		adv, _ := library.Get(id)
		st := engine.NewState(engine.Config{TurnTimeoutS: 90}, adv, library.Catalogue, 3)
		want := st.Clone()
		createTable(t, s, id, st)
		sameState(t, load(t, s, id).State, want)
		next := want.Clone()
		next.Game.Turn++
		if err := s.Commit(ctx, store.Commit{TableID: id, State: next}); err != nil {
			t.Fatal(err)
		}
		sameState(t, load(t, s, id).State, next)
	}
}

func testAdventures(t *testing.T, s AdventureStore) {
	if err := s.CreatePlayer(ctx, engine.Player{ID: "p1", Name: "Ann", CreatedAt: at}, []byte("h")); err != nil {
		t.Fatal(err)
	}
	a := store.Adventure{ID: "cellar", AuthorID: "p1", Title: "Cellar", Summary: "Rats.", Source: []byte("id: cellar\n"), CreatedAt: at, UpdatedAt: at}
	if err := s.CreateAdventure(ctx, a); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreateAdventure(ctx, a), engine.ECONFLICT)
	b := store.Adventure{ID: "barn", AuthorID: "p1", Title: "Barn", Source: []byte("id: barn\n"), ForkedFrom: "cellar",
		CreatedAt: at.Add(time.Second), UpdatedAt: at.Add(time.Second)}
	if err := s.CreateAdventure(ctx, b); err != nil {
		t.Fatal(err)
	}
	list, err := s.Adventures(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "cellar" || list[1].ID != "barn" || list[1].ForkedFrom != "cellar" {
		t.Fatalf("list, oldest first: %+v %v", list, err)
	}

	a.Title, a.Source, a.UpdatedAt = "Cellar II", []byte("id: cellar\nname: II\n"), at.Add(time.Minute)
	if err := s.ReplaceAdventure(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Adventure(ctx, "cellar")
	if err != nil || got.Title != "Cellar II" || got.Summary != "Rats." || string(got.Source) != string(a.Source) ||
		got.AuthorName != "Ann" || !got.CreatedAt.Equal(at) || !got.UpdatedAt.Equal(a.UpdatedAt) || got.Hidden {
		t.Fatalf("adventure = %+v, %v", got, err)
	}
	wantCode(t, s.ReplaceAdventure(ctx, store.Adventure{ID: "nope", UpdatedAt: at}), engine.ENOTFOUND)
	_, err = s.Adventure(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)

	createTable(t, s, "t1", fightingState(t))
	_, _, err = s.TableAdventure(ctx, "t1")
	wantCode(t, err, engine.ENOTFOUND)
	if err := s.KeepTableAdventure(ctx, "t1", "cellar", got.Source); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.KeepTableAdventure(ctx, "t-none", "cellar", got.Source), engine.ENOTFOUND)
	counts, err := s.AdventureTables(ctx)
	if err != nil || len(counts) != 1 || counts[adventures.Default] != 1 {
		t.Fatalf("tables by adventure: %v %v", counts, err)
	}
	for id, want := range map[string]int{adventures.Default: 1, "cellar": 0} {
		if n, err := s.AdventureTableCount(ctx, id); err != nil || n != want {
			t.Errorf("tables of %s: %d %v, want %d", id, n, err, want)
		}
	}

	// A hidden adventure leaves the list, but is still there by id and
	// for the tables made from it; replacing it shows it again.
	if err := s.HideAdventure(ctx, "cellar"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.HideAdventure(ctx, "nope"), engine.ENOTFOUND)
	if list, err := s.Adventures(ctx); err != nil || len(list) != 1 || list[0].ID != "barn" {
		t.Errorf("listed after hiding: %+v, %v", list, err)
	}
	if got, err := s.Adventure(ctx, "cellar"); err != nil || !got.Hidden {
		t.Errorf("hidden adventure = %+v, %v", got, err)
	}
	if id, src, err := s.TableAdventure(ctx, "t1"); err != nil || id != "cellar" || string(src) != string(a.Source) {
		t.Errorf("the table's copy: %s %q %v", id, src, err)
	}
	if err := s.ReplaceAdventure(ctx, a); err != nil {
		t.Fatal(err)
	}
	if list, err := s.Adventures(ctx); err != nil || len(list) != 2 {
		t.Errorf("listed after replacing: %+v, %v", list, err)
	}
}
