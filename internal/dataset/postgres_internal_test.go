package dataset

import (
	"context"
	"errors"
	"testing"

	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
)

// TestPostgresRoleRefusesWithoutTheGuard: past the guard, the data role
// itself reads no base table, sets no role and writes nothing.
func TestPostgresRoleRefusesWithoutTheGuard(t *testing.T) {
	d := mustOpenPostgresInternal(t)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT token_hash FROM players",
		"SELECT secret FROM npcs",
		"SELECT set_config('role', 'postgres', false)",
		"SELECT pg_read_file('/etc/passwd')",
	} {
		if r, err := d.runPostgres(ctx, q); err == nil {
			t.Errorf("%s ran: %v", q, r.Rows)
		}
	}
	for _, q := range []string{"CREATE TABLE evil (a int)", "UPDATE tables SET name = 'x'", "SET default_transaction_read_only = off"} {
		tx, err := d.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tx.ExecContext(ctx, q)
		if q == "SET default_transaction_read_only = off" && err == nil {
			// A session may lift its own default; the grants still hold.
			_, err = tx.ExecContext(ctx, "UPDATE tables SET name = 'x'")
		}
		tx.Rollback()
		if err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
	if _, err := d.runPostgres(ctx, "SELECT 1 AS one"); err != nil {
		t.Errorf("a harmless select: %v", err)
	}
	var qe *queryError
	if _, err := d.runPostgres(ctx, "SELECT * FROM players"); !errors.As(err, &qe) || !errors.Is(err, ErrRefused) {
		t.Errorf("a base table past the guard: %v, want a refusal for the model", err)
	}
}

// mustOpenPostgresInternal opens the data role's view of a new, migrated
// PostgreSQL database.
func mustOpenPostgresInternal(t *testing.T) *Dataset {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	st, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var views []string
	for _, v := range Views() {
		views = append(views, v.Name)
	}
	roleURL, err := st.DataRole(ctx, url, "pw", views)
	if err != nil {
		t.Fatal(err)
	}
	d, err := OpenPostgres(ctx, roleURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
