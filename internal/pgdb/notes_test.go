package pgdb_test

import (
	"testing"

	"tavern/internal/store/storetest"
)

// TestNotesContract runs the contract of notes, whispers, feedback, edits
// and retcons on PostgreSQL, as internal/db runs it on SQLite.
func TestNotesContract(t *testing.T) {
	storetest.RunNotes(t, func(t *testing.T) storetest.NotesStore { return open(t) })
}
