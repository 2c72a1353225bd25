package db_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"tavern/internal/db"
	"tavern/internal/store/storetest"
)

// rawEvents is a DB whose events' stored bytes a test reads from its file.
type rawEvents struct {
	*db.DB
	path string
}

func (r rawEvents) EventData(ctx context.Context, tableID string) ([]string, error) {
	raw, err := sql.Open("sqlite", r.path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	rows, err := raw.QueryContext(ctx, "SELECT data FROM events WHERE table_id = ? ORDER BY seq", tableID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// TestPlayerDataContract runs the contract of the operator's player page and erasure on SQLite
// (internal/pgdb runs it on PostgreSQL).
func TestPlayerDataContract(t *testing.T) {
	storetest.RunPlayerData(t, func(t *testing.T) storetest.PlayerDataStore {
		path := filepath.Join(t.TempDir(), "tavern.db")
		d, err := db.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return rawEvents{d, path}
	})
}
