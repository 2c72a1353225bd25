package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestTableOwnersContract runs the contract of the table owner's side on
// SQLite (internal/pgdb runs it on PostgreSQL).
func TestTableOwnersContract(t *testing.T) {
	storetest.RunTableOwners(t, func(t *testing.T) storetest.TableOwnersStore {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
