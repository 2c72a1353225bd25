package dataset_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
	"tavern/internal/engine"
)

// hostile is what a model trying to write, escape or read secrets would
// send. Every one must be refused before it runs.
var hostile = []struct{ name, sql string }{
	{"drop", "DROP TABLE players"},
	{"drop view", "DROP VIEW v_tables"},
	{"delete", "DELETE FROM tables"},
	{"update", "UPDATE players SET name = 'x'"},
	{"insert", "INSERT INTO players (id, name, token_hash, created_at) VALUES ('p9', 'x', x'00', '')"},
	{"replace", "REPLACE INTO llm_calls (id) VALUES (1)"},
	{"mixed case and spaces", "  dElEtE\n\tFROM   events"},
	{"attach", "ATTACH DATABASE '/tmp/evil.db' AS evil"},
	{"attach uri", "ATTACH 'file:/tmp/evil.db?mode=rwc' AS evil"},
	{"detach", "DETACH DATABASE main"},
	{"pragma writable_schema", "PRAGMA writable_schema = 1"},
	{"pragma query_only", "PRAGMA query_only = 0"},
	{"pragma read", "PRAGMA table_info(players)"},
	{"load_extension", "SELECT load_extension('/tmp/evil.so')"},
	{"load_extension quoted", `SELECT "load_extension"('/tmp/evil.so')`},
	{"readfile", "SELECT readfile('/etc/passwd')"},
	{"fts3_tokenizer", "SELECT fts3_tokenizer('simple')"},
	{"vacuum", "VACUUM"},
	{"vacuum into", "VACUUM INTO '/tmp/copy.db'"},
	{"reindex", "REINDEX"},
	{"analyze", "ANALYZE"},
	{"begin", "BEGIN IMMEDIATE"},
	{"savepoint", "SAVEPOINT s"},
	{"create temp table", "CREATE TEMP TABLE t AS SELECT * FROM v_tables"},
	{"create view", "CREATE VIEW v_evil AS SELECT token_hash FROM players"},
	{"two statements", "SELECT 1; DROP TABLE players"},
	{"two selects", "SELECT 1; SELECT 2"},
	{"semicolon in comment then write", "SELECT 1 /* ; */ ; DELETE FROM players"},
	{"line comment hides nothing", "SELECT 1 -- harmless\n; DELETE FROM players"},
	{"semicolon in string then write", "SELECT ';' ; DELETE FROM players"},
	{"write after comment", "/* just a select */ DELETE FROM players"},
	{"write hidden by quote games", "SELECT 'a'';' ; UPDATE players SET name = 'x'"},
	{"cte with delete", "WITH x AS (DELETE FROM players RETURNING *) SELECT * FROM x"},
	{"cte then delete", "WITH x AS (SELECT 1) DELETE FROM players"},
	{"cte then insert", "WITH x AS (SELECT 1) INSERT INTO players SELECT * FROM players"},
	{"returning", "SELECT 1 RETURNING *"},
	{"token_hash", "SELECT token_hash FROM players"},
	{"players star", "SELECT * FROM players"},
	{"players quoted", `SELECT * FROM "players"`},
	{"players bracket", "SELECT * FROM [players]"},
	{"players backtick", "SELECT * FROM `players`"},
	{"players schema qualified", "SELECT * FROM main.players"},
	{"players as string", "SELECT * FROM 'players'"},
	{"players odd case", "SELECT hex(token_hash) FROM PlAyErS"},
	{"players in subquery", "SELECT (SELECT token_hash FROM players LIMIT 1) FROM v_tables"},
	{"players in union", "SELECT name FROM v_players UNION SELECT token_hash FROM players"},
	{"players joined to a view", "SELECT * FROM v_players NATURAL JOIN players"},
	{"players in cte", "WITH p AS (SELECT * FROM players) SELECT * FROM p"},
	{"npc secret", "SELECT secret FROM npcs"},
	{"rng state", "SELECT rng FROM game_state"},
	{"agent messages raw", "SELECT body FROM agent_messages"},
	{"sqlite_master", "SELECT sql FROM sqlite_master"},
	{"sqlite_schema", "SELECT * FROM sqlite_schema"},
	{"sqlite_temp_master", "SELECT * FROM sqlite_temp_master"},
	{"sqlite_dbpage", "SELECT data FROM sqlite_dbpage"},
	{"dbstat", "SELECT * FROM dbstat"},
	{"pragma function", "SELECT * FROM pragma_table_info('players')"},
	{"goose table", "SELECT * FROM goose_db_version"},
	{"fts shadow", "SELECT * FROM memories_fts_data"},
	{"parameter", "SELECT * FROM v_tables WHERE table_id = ?"},
	{"named parameter", "SELECT * FROM v_tables WHERE table_id = :id"},
	{"unbalanced paren", "SELECT 1) UNION SELECT (2"},
	{"empty", "   -- nothing\n"},
	{"only semicolons", ";;"},
	{"not a select", "EXPLAIN SELECT * FROM v_tables"},
	{"too long", "SELECT " + strings.Repeat("1+", 15000) + "1"},
}

func TestQueryRefusesHostileSQL(t *testing.T) {
	d, path := mustOpen(t)
	before := checksum(t, path)
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			r, err := d.Query(context.Background(), tc.sql)
			if !errors.Is(err, dataset.ErrRefused) {
				t.Fatalf("Query(%q) = %v, %v; want a refusal", tc.sql, r, err)
			}
			if engine.ErrorCode(err) != engine.EINVALID || !strings.HasPrefix(engine.ErrorMessage(err), "Refused: ") {
				t.Errorf("refusal %v: code %s, message %q; want an EINVALID sentence for the model", err, engine.ErrorCode(err), engine.ErrorMessage(err))
			}
			for _, s := range datasettest.Secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("refusal %q leaks a secret", err)
				}
			}
		})
	}
	if after := checksum(t, path); after != before {
		t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
	}
	if _, err := os.Stat("/tmp/evil.db"); err == nil {
		t.Errorf("/tmp/evil.db exists")
	}
}

// TestQueryNeverReturnsSecrets reads every view in full: no secret the
// seed stored appears in any value.
func TestQueryNeverReturnsSecrets(t *testing.T) {
	d, _ := mustOpen(t)
	for _, v := range dataset.Views() {
		r, err := d.Query(context.Background(), "SELECT * FROM "+v.Name)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		text := fmt.Sprint(r.Rows)
		for _, s := range datasettest.Secrets {
			if strings.Contains(text, s) || strings.Contains(text, hex.EncodeToString([]byte(s))) {
				t.Errorf("%s returns the secret %q", v.Name, s)
			}
		}
	}
}

func TestQueryAllowsReads(t *testing.T) {
	d, _ := mustOpen(t)
	for _, tc := range []struct {
		name, sql string
		rows      int
	}{
		{"view", "SELECT * FROM v_tables", 3},
		{"trailing semicolons and comment", "SELECT * FROM v_tables;; -- done", 3},
		{"with", "WITH d AS (SELECT ruleset, count(*) AS n FROM v_combats GROUP BY ruleset) SELECT * FROM d", 2},
		{"values", "VALUES (1), (2)", 2},
		{"replace function", "SELECT replace(name, 'Grey', 'Green') FROM v_tables", 3},
		{"string naming a word we refuse as a keyword", "SELECT * FROM v_events WHERE kind = 'delete'", 0},
		{"json_each", "SELECT j.value FROM v_events, json_each(v_events.data, '$.rolls') j WHERE kind = 'dice'", 13},
		{"join views", "SELECT t.name, count(*) FROM v_turns u JOIN v_tables t USING (table_id) GROUP BY t.name", 3},
		{"window function", "SELECT name, rank() OVER (ORDER BY turns_played DESC) FROM v_tables", 3},
		{"player names", "SELECT name FROM v_players", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := d.Query(context.Background(), tc.sql)
			if err != nil {
				t.Fatalf("Query(%q): %v", tc.sql, err)
			}
			if len(r.Rows) != tc.rows {
				t.Errorf("Query(%q) = %d rows, want %d", tc.sql, len(r.Rows), tc.rows)
			}
		})
	}
}

// TestQueryKeepsOrder: folding the rows into one JSON value keeps the
// statement's ORDER BY.
func TestQueryKeepsOrder(t *testing.T) {
	d, path := mustOpen(t)
	for _, q := range []string{
		"SELECT name FROM v_tables ORDER BY turns_played DESC",
		"SELECT name FROM v_tables ORDER BY turns_played ASC",
		"SELECT tool FROM v_tool_calls GROUP BY tool ORDER BY sum(failed) DESC, count(*) DESC",
		"SELECT day FROM v_llm_calls GROUP BY day ORDER BY day DESC",
	} {
		r, err := d.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(r.Rows)
		// The same statement straight through database/sql is the reference.
		if ref := direct(t, path, q); got != ref {
			t.Errorf("%s:\n got %s\nwant %s", q, got, ref)
		}
	}
}

func TestQueryRowCap(t *testing.T) {
	d, _ := mustOpen(t)
	d.MaxRows = 5
	r, err := d.Query(context.Background(), "SELECT * FROM v_events")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 5 || !r.Truncated || r.MaxRows != 5 {
		t.Errorf("rows %d, truncated %v, max %d; want 5, true, 5", len(r.Rows), r.Truncated, r.MaxRows)
	}
	r, err = d.Query(context.Background(), "SELECT * FROM v_tables")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 3 || r.Truncated {
		t.Errorf("rows %d, truncated %v; want 3, false", len(r.Rows), r.Truncated)
	}
}

// TestQueryDeadline runs statements that never end. The first finds its
// first row at once and then searches forever, which modernc.org/sqlite
// would not interrupt in Rows.Next; folding makes it one step. Each
// returns only if the deadline interrupts it, so the test asserts no
// duration: a loaded machine may take longer to get there.
func TestQueryDeadline(t *testing.T) {
	d, _ := mustOpen(t)
	d.Timeout = 200 * time.Millisecond
	for _, q := range []string{
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c WHERE x = 1 OR x < 0",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
		"SELECT count(*) FROM v_events a, v_events b, v_events c, v_events d, v_events e",
	} {
		_, err := d.Query(context.Background(), q)
		if !errors.Is(err, dataset.ErrTimeout) {
			t.Errorf("Query(%q) = %v; want ErrTimeout", q, err)
		}
	}
	// The connection is usable after an interrupt.
	if _, err := d.Query(context.Background(), "SELECT count(*) FROM v_tables"); err != nil {
		t.Errorf("query after interrupt: %v", err)
	}
}

func TestQueryInvalidSQL(t *testing.T) {
	d, _ := mustOpen(t)
	for _, q := range []string{
		"SELECT nosuch FROM v_tables",
		"SELECT * FROM v_nosuch",
		"SELECT * FROM v_tables WHERE",
		"SELECT * FROM v_tables WHERE name = 'unterminated",
	} {
		_, err := d.Query(context.Background(), q)
		if err == nil || engine.ErrorCode(err) != engine.EINVALID {
			t.Errorf("Query(%q) = %v; want an EINVALID error", q, err)
		}
		if !errors.Is(err, dataset.ErrInvalid) && !errors.Is(err, dataset.ErrRefused) {
			t.Errorf("Query(%q) = %v; want ErrInvalid or ErrRefused", q, err)
		}
	}
}

func TestQueryTypes(t *testing.T) {
	d, _ := mustOpen(t)
	r, err := d.Query(context.Background(), "SELECT 2.5, 'x', NULL, 3, 12345678901234")
	if err != nil {
		t.Fatal(err)
	}
	want := []any{2.5, "x", nil, int64(3), int64(12345678901234)}
	if fmt.Sprintf("%#v", r.Rows[0]) != fmt.Sprintf("%#v", want) {
		t.Errorf("row %#v, want %#v", r.Rows[0], want)
	}
}

func TestOpenRefusesAnUnmigratedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec("CREATE TABLE x (y)"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if d, err := dataset.Open(context.Background(), path); err == nil {
		d.Close()
		t.Fatal("Open of a database without the views succeeded")
	}
	if d, err := dataset.Open(context.Background(), filepath.Join(t.TempDir(), "missing.db")); err == nil {
		d.Close()
		t.Fatal("Open of a missing file succeeded")
	}
}

// direct runs q without the dataset's folding, on a plain connection, and
// formats its rows as fmt formats Result.Rows.
func direct(t *testing.T, path, q string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := [][]any{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	return fmt.Sprint(out)
}

// checksum hashes the database file and, table by table, every row of
// every table, through a connection of its own.
func checksum(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	names := []string{}
	rows, err := db.Query("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'index', 'trigger') ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	rows.Close()
	h := sha256.New()
	fmt.Fprintln(h, names)
	for _, n := range names {
		var schemaSQL sql.NullString
		db.QueryRow("SELECT sql FROM sqlite_schema WHERE name = ?", n).Scan(&schemaSQL)
		fmt.Fprintln(h, n, schemaSQL.String)
		var typ string
		db.QueryRow("SELECT type FROM sqlite_schema WHERE name = ?", n).Scan(&typ)
		if typ != "table" {
			continue
		}
		rows, err := db.Query(fmt.Sprintf("SELECT * FROM %q", n))
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%v\n", vals)
		}
		rows.Close()
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := sha256.Sum256(file)
	return hex.EncodeToString(h.Sum(nil)) + " file " + hex.EncodeToString(f[:])
}
