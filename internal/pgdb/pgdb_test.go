package pgdb_test

import (
	"context"
	"os"
	"testing"

	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// open opens a store on a new database of the test cluster.
func open(t *testing.T) *pgdb.DB {
	t.Helper()
	d, err := pgdb.Open(context.Background(), pgtest.URL(t), pgdb.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestContract runs the stores' contract suite on PostgreSQL.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return open(t) })
}
