package pgdb_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"tavern/internal/db"
)

// engineOnly are the schema objects one engine has for what the other
// does differently: SQLite's FTS5 table of the memories (and its shadow
// tables) is PostgreSQL's generated tsvector column and its GIN index.
var engineOnly = map[string]bool{
	"table memories_fts":         true,
	"table memories_fts_data":    true,
	"table memories_fts_idx":     true,
	"table memories_fts_docsize": true,
	"table memories_fts_config":  true,
	"column memories.search":     true,
	"index memories_search":      true,
}

// TestSchemaParity compares the schema the SQLite migrations (migrations/)
// make with the one the PostgreSQL migrations (migrations/postgres/) make:
// the same tables and views, the same columns in each, the same indexes
// on the same columns, the same migration versions. A migration added to
// one folder needs its twin, with the same version number, in the other;
// the failures name each table, column or index missing and on which side.
func TestSchemaParity(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tavern.db")
	lite, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	lite.Close()
	litedb, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer litedb.Close()
	pg := open(t)
	defer pg.Close()
	pgdb := pg.SQL()
	defer pgdb.Close()

	sqliteSchema := schema(t, litedb, sqliteObjects)
	pgSchema := schema(t, pgdb, postgresObjects)
	var problems []string
	for obj, def := range sqliteSchema {
		if engineOnly[obj] {
			continue
		}
		if got, ok := pgSchema[obj]; !ok {
			problems = append(problems, fmt.Sprintf("%s is in migrations/ (SQLite) but missing from migrations/postgres", obj))
		} else if got != def {
			problems = append(problems, fmt.Sprintf("%s differs: SQLite (%s), PostgreSQL (%s)", obj, def, got))
		}
	}
	for obj := range pgSchema {
		if _, ok := sqliteSchema[obj]; !ok && !engineOnly[obj] {
			problems = append(problems, fmt.Sprintf("%s is in migrations/postgres but missing from migrations/ (SQLite)", obj))
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	if len(sqliteSchema) < 20 {
		t.Fatalf("read only %d schema objects from SQLite", len(sqliteSchema))
	}
	if v1, v2 := versions(t, litedb), versions(t, pgdb); !slices.Equal(v1, v2) {
		t.Errorf("migration versions differ: SQLite %v, PostgreSQL %v", v1, v2)
	}
}

// The queries listing each engine's objects, one row each: its kind
// ("table", "view", "column", "index"), its name ("table.column" for a
// column) and what must match (an index's table and columns). Indexes
// made by a constraint (UNIQUE, PRIMARY KEY) are left out on both sides:
// SQLite keeps no SQL for them; a CREATE UNIQUE INDEX counts on both.
const (
	sqliteObjects = `
SELECT type, name, '' FROM sqlite_master
	WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'
UNION ALL
SELECT 'column', m.name || '.' || c.name, '' FROM sqlite_master m, pragma_table_info(m.name) c
	WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite_%' AND m.name <> 'goose_db_version' AND m.name NOT LIKE 'memories_fts%'
UNION ALL
SELECT 'index', m.name, m.tbl_name || ' (' || (SELECT group_concat(name, ', ') FROM (SELECT i.name FROM pragma_index_info(m.name) i ORDER BY i.seqno)) || ')'
	FROM sqlite_master m WHERE m.type = 'index' AND m.sql IS NOT NULL`
	postgresObjects = `
SELECT CASE c.relkind WHEN 'v' THEN 'view' ELSE 'table' END, c.relname, '' FROM pg_class c
	WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v') AND c.relname <> 'goose_db_version'
UNION ALL
SELECT 'column', c.relname || '.' || a.attname, '' FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
	WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'v') AND c.relname <> 'goose_db_version'
	AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'index', i.relname, t.relname || ' (' || (SELECT string_agg(a.attname, ', ' ORDER BY k.n) FROM unnest(x.indkey) WITH ORDINALITY k(att, n)
		JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.att) || ')'
	FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
	WHERE t.relnamespace = 'public'::regnamespace AND NOT x.indisprimary
		AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`
)

// schema returns the objects q lists: "kind name" → what must match.
func schema(t *testing.T, d *sql.DB, q string) map[string]string {
	t.Helper()
	rows, err := d.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var kind, name string
		var def sql.NullString
		if err := rows.Scan(&kind, &name, &def); err != nil {
			t.Fatal(err)
		}
		out[kind+" "+name] = strings.TrimSpace(def.String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func versions(t *testing.T, d *sql.DB) []int64 {
	t.Helper()
	rows, err := d.Query("SELECT version_id FROM goose_db_version WHERE version_id > 0 AND is_applied ORDER BY version_id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
