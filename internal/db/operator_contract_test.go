package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestOperatorContract runs the suite's operator cases on SQLite
// (internal/pgdb runs them on PostgreSQL).
func TestOperatorContract(t *testing.T) {
	storetest.RunOperator(t, func(t *testing.T) storetest.OperatorStore {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
