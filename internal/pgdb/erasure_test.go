package pgdb_test

import (
	"context"

	"testing"

	"github.com/jackc/pgx/v5"

	"tavern/internal/pgdb"
	"tavern/internal/store/storetest"
)

// rawEvents is a DB whose events' stored bytes a test reads.
type rawEvents struct{ *pgdb.DB }

func (r rawEvents) EventData(ctx context.Context, tableID string) ([]string, error) {
	rows, err := r.Pool().Query(ctx, "SELECT data FROM events WHERE table_id = $1 ORDER BY seq", tableID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// TestPlayerDataContract runs the contract of the operator's player page and erasure on
// PostgreSQL.
func TestPlayerDataContract(t *testing.T) {
	storetest.RunPlayerData(t, func(t *testing.T) storetest.PlayerDataStore { return rawEvents{open(t)} })
}
