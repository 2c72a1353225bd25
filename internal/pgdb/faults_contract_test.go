package pgdb_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store/storetest"
)

// TestFaultsContract runs the contract of a store that cannot write on
// PostgreSQL: a database turned read-only refuses every write.
func TestFaultsContract(t *testing.T) {
	admins := map[*pgdb.DB]*pgx.Conn{}
	readOnly := func(t *testing.T, d *pgdb.DB, on bool) {
		t.Helper()
		admin := admins[d]
		q := "ALTER DATABASE " + pgx.Identifier{admin.Config().Database}.Sanitize() + " SET default_transaction_read_only = off"
		if on {
			q = q[:len(q)-3] + "on"
		}
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
		d.Pool().Reset() // new sessions take the setting
	}
	storetest.RunFaults(t, storetest.Faults{
		Open: func(t *testing.T) storetest.FaultStore {
			url := pgtest.URL(t)
			// A session made before the database turns read-only, to
			// turn it back.
			admin, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Close(ctx) })
			d, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			admins[d] = admin
			return d
		},
		Break: func(t *testing.T, s storetest.FaultStore) { readOnly(t, s.(*pgdb.DB), true) },
		Heal:  func(t *testing.T, s storetest.FaultStore) { readOnly(t, s.(*pgdb.DB), false) },
	})
}
