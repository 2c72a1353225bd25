package pgdb_test

import (
	"testing"

	"tavern/internal/store/storetest"
)

// TestAdventuresContract runs the suite's adventure cases on PostgreSQL.
func TestAdventuresContract(t *testing.T) {
	storetest.RunAdventures(t, func(t *testing.T) storetest.AdventureStore { return open(t) })
}
