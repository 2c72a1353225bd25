package pgdb_test

import (
	"context"
	"fmt"
	"os"
	"strings"
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

// TestOpenRefusesAnotherLocale: a database that does not sort text as
// bytes is refused, with the statement that makes a right one.
func TestOpenRefusesAnotherLocale(t *testing.T) {
	ctx := context.Background()
	d := open(t)
	defer d.Close()
	if _, err := d.Pool().Exec(ctx, "CREATE DATABASE other_locale TEMPLATE template0 LC_COLLATE 'C.UTF-8' LC_CTYPE 'C.UTF-8'"); err != nil {
		t.Skipf("no C.UTF-8 locale here: %v", err)
	}
	cfg := d.Pool().Config().ConnConfig
	url := fmt.Sprintf("postgres://%s@/other_locale?host=%s&sslmode=disable", cfg.User, cfg.Host)
	_, err := pgdb.Open(ctx, url, pgdb.Options{})
	if err == nil || !strings.Contains(err.Error(), "LC_COLLATE 'C'") {
		t.Fatalf("Open on a C.UTF-8 database: %v", err)
	}
}

// TestUnreachable: a database that cannot be reached is told apart from
// a refusal, so that a node waits for it at start.
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	_, err := pgdb.Open(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", pgdb.Options{})
	if !pgdb.Unreachable(err) {
		t.Errorf("no server at the address: %v, want unreachable", err)
	}
}
