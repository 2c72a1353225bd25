package dataset

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tavern/internal/dataset/datasettest"
)

func mustOpenInternal(t *testing.T) *Dataset {
	t.Helper()
	d, err := Open(context.Background(), datasettest.MustSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestPlanRefusesWithoutTheGuard compiles hostile statements and checks
// that SQLite's own bytecode is enough to refuse them, had the tokenizer
// missed them.
func TestPlanRefusesWithoutTheGuard(t *testing.T) {
	d := mustOpenInternal(t)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT token_hash FROM players",
		"SELECT * FROM players",
		"SELECT hex(token_hash) FROM main.players WHERE name = 'Alice'",
		"SELECT id FROM players WHERE token_hash = x'00'", // would use the index over token_hash
		"SELECT secret FROM npcs",
		"SELECT rng FROM game_state",
		"SELECT sql FROM sqlite_schema",
		"SELECT * FROM goose_db_version",
		"DELETE FROM players",
		"UPDATE tables SET name = 'x'",
		"INSERT INTO players SELECT * FROM players",
		"DROP TABLE players",
		"CREATE TABLE x (y)",
		"BEGIN IMMEDIATE",
		"PRAGMA writable_schema = 1",
		"VACUUM",
		"SELECT load_extension('/tmp/evil.so')",
	} {
		ops, err := explain(ctx, d.db, q)
		if err != nil {
			t.Logf("%s: SQLite does not compile it here: %v", q, err)
			continue
		}
		err = d.schema.checkPlan(ops)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("plan of %q passed; want a refusal", q)
		}
		t.Logf("%s: %v", q, err)
	}
	for _, q := range []string{
		"SELECT * FROM v_players",
		"SELECT * FROM v_seats",
		"SELECT name FROM players",     // under v_players: readable, the secret column is not
		"SELECT count(*) FROM players", // may count through the index over token_hash
		"SELECT * FROM v_tool_calls WHERE failed = 1",
	} {
		ops, err := explain(ctx, d.db, q)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.schema.checkPlan(ops); err != nil {
			t.Errorf("plan of %q refused: %v", q, err)
		}
	}
}

// TestConnectionRefusesWrites sends writes straight to the dataset's
// connection, past both checks: SQLite refuses them (mode=ro), even after
// query_only is turned off, and ATTACH is disabled.
func TestConnectionRefusesWrites(t *testing.T) {
	d := mustOpenInternal(t)
	ctx := context.Background()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := limit(conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 0"); err != nil {
		t.Logf("query_only: %v", err)
	}
	for _, q := range []string{
		"DELETE FROM players",
		"UPDATE tables SET name = 'x'",
		"CREATE TABLE x (y)",
		"DROP VIEW v_tables",
		"ATTACH DATABASE '" + t.TempDir() + "/evil.db' AS evil",
	} {
		if _, err := conn.ExecContext(ctx, q); err == nil {
			t.Errorf("%q succeeded on the read-only connection", q)
		} else if !strings.Contains(err.Error(), "readonly") && !strings.Contains(err.Error(), "read-only") && !strings.Contains(err.Error(), "too many attached") {
			t.Logf("%q: %v", q, err)
		}
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM players").Scan(&n); err != nil || n != 4 {
		t.Errorf("players = %d, %v; want 4 unchanged", n, err)
	}
}
