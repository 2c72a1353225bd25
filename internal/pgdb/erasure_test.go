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

// TestErasureContract runs the contract of a player's erasure on
// PostgreSQL.
func TestErasureContract(t *testing.T) {
	storetest.RunErasure(t, func(t *testing.T) storetest.ErasureStore { return rawEvents{open(t)} })
}
