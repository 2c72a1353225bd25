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

// TestAuthorizerRefusesWithoutTheGuard runs hostile statements past the
// tokenizer and checks that SQLite's authorizer is enough to refuse them,
// had the tokenizer missed them.
func TestAuthorizerRefusesWithoutTheGuard(t *testing.T) {
	d := mustOpenInternal(t)
	ctx := context.Background()
	for _, q := range []string{
		"SELECT token_hash FROM players",
		"SELECT * FROM players",
		"SELECT hex(token_hash) FROM main.players WHERE name = 'Alice'",
		"SELECT id FROM players WHERE token_hash = x'00'", // would use the index over token_hash
		"SELECT count(*) FROM players WHERE token_hash > x'00'",
		"SELECT secret FROM npcs",
		"SELECT rng FROM game_state",
		"WITH v_players AS (SELECT token_hash FROM players) SELECT * FROM v_players",
		"SELECT sql FROM sqlite_schema",
		"SELECT 1 FROM sqlite_schema",
		"SELECT * FROM goose_db_version",
		"SELECT * FROM pragma_table_info('players')",
		"SELECT * FROM dbstat",
		"SELECT load_extension('/tmp/evil.so')",
		"SELECT sqlite_version()",
		// Not SELECTs. VACUUM presents no action to the authorizer: it is
		// refused for returning no columns, and mode=ro backs that.
		"DELETE FROM players",
		"UPDATE tables SET name = 'x'",
		"INSERT INTO players SELECT * FROM players",
		"DROP TABLE players",
		"CREATE TABLE x (y)",
		"BEGIN IMMEDIATE",
		"PRAGMA writable_schema = 1",
		"ATTACH DATABASE 'evil.db' AS evil",
		"VACUUM",
	} {
		_, err := d.run(ctx, q)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("run(%q) = %v; want a refusal", q, err)
		}
		t.Logf("%s: %v", q, err)
	}
	for _, q := range []string{
		"SELECT * FROM v_players",
		"SELECT * FROM v_seats",
		"SELECT count(*) FROM v_players",
		"SELECT name FROM players",     // under v_players: readable, the secret column is not
		"SELECT count(*) FROM players", // may count through the index over token_hash
		"SELECT * FROM v_tool_calls WHERE failed = 1",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT count(*) FROM c",
		"SELECT j.value FROM v_events, json_each(v_events.data, '$.rolls') j WHERE kind = 'dice'",
	} {
		if _, err := d.run(ctx, q); err != nil {
			t.Errorf("run(%q) refused: %v", q, err)
		}
	}
}

// TestAuthorizerNamesTheRefusal: a statement the authorizer denies is
// refused with a sentence for the model, not SQLite's "not authorized".
func TestAuthorizerNamesTheRefusal(t *testing.T) {
	d := mustOpenInternal(t)
	for _, tc := range []struct{ sql, want string }{
		{"SELECT token_hash FROM players", "secret column"},
		{"SELECT * FROM goose_db_version", "outside the curated views"},
		{"SELECT sqlite_version()", "function sqlite_version"},
	} {
		_, err := d.run(context.Background(), tc.sql)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v; want a refusal saying %q", tc.sql, err, tc.want)
		}
	}
}

// TestConnectionRefusesWrites sends writes straight to the dataset's
// connection, past the guard and the authorizer: SQLite refuses them (mode=ro), even after
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
	// This layer alone: without the authorizer.
	if err := conn.Raw(func(dc any) error { return install(dc, nil) }); err != nil {
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
