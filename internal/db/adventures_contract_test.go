package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestAdventuresContract runs the suite's adventure cases on SQLite
// (internal/pgdb runs them on PostgreSQL).
func TestAdventuresContract(t *testing.T) {
	storetest.RunAdventures(t, func(t *testing.T) storetest.AdventureStore {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
