package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// TestAlertsContract runs the suite's alert history cases on SQLite
// (internal/pgdb runs them on PostgreSQL).
func TestAlertsContract(t *testing.T) {
	storetest.RunAlerts(t, func(t *testing.T) storetest.AlertStore {
		d, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "tavern.db"))
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}
