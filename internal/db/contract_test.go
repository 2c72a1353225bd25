package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestContract runs the stores' contract suite on SQLite (internal/pgdb
// runs it on PostgreSQL).
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
