package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestNotesContract runs the contract of notes, whispers, feedback, edits
// and retcons on SQLite (internal/pgdb runs it on PostgreSQL).
func TestNotesContract(t *testing.T) {
	storetest.RunNotes(t, func(t *testing.T) storetest.NotesStore {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
