package dataset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"tavern/internal/engine"
)

// The data agent on PostgreSQL (DESIGN.md "Beyond one machine"). The
// layers there:
//   - the connection: it logs in as a role of its own (internal/pgdb's
//     DataRole) that may SELECT the curated views and nothing else (no
//     base table, no other schema object is granted to it), whose
//     sessions are read-only (default_transaction_read_only) and bounded
//     (statement_timeout); each query also runs in a READ ONLY
//     transaction with its own SET LOCAL statement_timeout;
//   - the guard (guard.go), as on SQLite, with PostgreSQL's catalogs and
//     its functions that reach outside SQL denied as well;
//   - the run: the statement is the body of a subquery with a LIMIT, and
//     cells and rows are bounded as they are read.

// pgDeniedFunctions reach outside SQL, change settings or sleep past
// the point; the role has no right to most of them anyway.
var pgDeniedFunctions = []string{"set_config", "current_setting", "lo_import", "lo_export", "lo_get", "lo_put",
	"dblink", "dblink_exec", "copy", "query_to_xml", "table_to_xml", "cursor_to_xml", "database_to_xml",
	"schema_to_xml", "xpath", "txid_current"}

// OpenPostgres opens the data agent's connections to the PostgreSQL
// database at url, which must log in as the data role (pgdb's DataRole),
// and checks that every curated view is there with the catalogue's
// columns. The caller must Close the Dataset.
func OpenPostgres(ctx context.Context, url string) (*Dataset, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	g, err := loadPostgres(ctx, db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	return &Dataset{Timeout: DefaultTimeout, MaxRows: DefaultMaxRows, db: db, guard: g, postgres: true}, nil
}

// loadPostgres checks the views against the catalogue and names every
// other relation of the database for the guard.
func loadPostgres(ctx context.Context, db *sql.DB) (*guard, error) {
	names := make([]string, len(catalogue))
	for i, v := range catalogue {
		names[i] = v.Name
		rows, err := db.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
			WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`, v.Name)
		if err != nil {
			return nil, err
		}
		var got []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			got = append(got, c)
		}
		rows.Close()
		if len(got) == 0 {
			return nil, fmt.Errorf("view %s is missing or not granted (is the database migrated?)", v.Name)
		}
		want := make([]string, len(v.Columns))
		for j, c := range v.Columns {
			want[j] = c.Name
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return nil, fmt.Errorf("view %s has columns %v, the catalogue %v", v.Name, got, want)
		}
	}
	// memories_fts: SQLite's search tables, refused on both engines alike.
	g := &guard{views: names, denied: map[string]bool{}, prefixes: []string{"pg_", "information_schema", "memories_fts"}}
	// The role sees the names of the relations, not their rows.
	rows, err := db.QueryContext(ctx, "SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		if !isView(n) {
			g.denied[strings.ToLower(n)] = true
		}
	}
	for _, f := range pgDeniedFunctions {
		g.denied[f] = true
	}
	return g, rows.Err()
}

// runPostgres runs body, a statement the guard accepted, for Query.
func (d *Dataset) runPostgres(ctx context.Context, body string) (*Result, error) {
	max := d.MaxRows
	if max <= 0 {
		max = DefaultMaxRows
	}
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tx, err := d.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", timeout.Milliseconds())); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	rows, err := tx.QueryContext(ctx, fmt.Sprintf("SELECT * FROM (\n%s\n) AS query LIMIT %d", body, max+1))
	if err != nil {
		return nil, pgInvalid(ctx, err, timeout)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, pgInvalid(ctx, err, timeout)
	}
	if len(cols) == 0 {
		return nil, refusef("the statement returns no columns; send a SELECT.")
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, pgInvalid(ctx, err, timeout)
	}
	r := &Result{SQL: body, Columns: cols, Rows: [][]any{}, MaxRows: max}
	size := 0
	for rows.Next() {
		if len(r.Rows) == max {
			r.RowsCut = CutRows
			break
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, pgInvalid(ctx, err, timeout)
		}
		for i, v := range vals {
			vals[i] = pgValue(v)
			if s, ok := vals[i].(string); ok && types[i].DatabaseTypeName() == "NUMERIC" {
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					vals[i] = f // a number, as SQLite's real
				}
			}
			if s, ok := vals[i].(string); ok && len(s) > MaxCellBytes {
				cut := s[:MaxCellBytes]
				for !utf8.ValidString(cut) {
					cut = cut[:len(cut)-1]
				}
				vals[i] = cut
				r.Cut = append(r.Cut, CellCut{Row: len(r.Rows), Column: i, Bytes: len(s), Shown: len(cut), Marker: cutMarker(len(s), len(cut))})
			}
			size += len(fmt.Sprint(vals[i])) + 3
		}
		if size > MaxResultBytes {
			r.RowsCut = CutBytes
			for len(r.Cut) > 0 && r.Cut[len(r.Cut)-1].Row >= len(r.Rows) {
				r.Cut = r.Cut[:len(r.Cut)-1]
			}
			break
		}
		r.Rows = append(r.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, pgInvalid(ctx, err, timeout)
	}
	r.Truncated = r.RowsCut != "" || len(r.Cut) > 0
	return r, nil
}

// pgValue keeps a Result's value types: int64, float64, string or nil;
// a flag is 0 or 1, as on SQLite.
func pgValue(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case float32:
		return float64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	default:
		// numeric and the rest: their text.
		if s, ok := v.(fmt.Stringer); ok {
			return s.String()
		}
		return fmt.Sprint(v)
	}
}

// pgInvalid turns PostgreSQL's rejection of a statement into a message
// for the model: a timeout, a refusal of rights, or an invalid query.
func pgInvalid(ctx context.Context, err error, timeout time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("query: %w", ctx.Err())
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57014": // query_canceled: statement_timeout
			return &queryError{app: engine.Errorf(engine.EINVALID,
				"The query ran longer than %s and was stopped. Make it cheaper: filter earlier, aggregate, avoid recursive or cross joins.", timeout), kind: ErrTimeout}
		case "42501", "25006": // insufficient_privilege, read_only_sql_transaction
			return refusef("%s. Only the curated views may be read.", pe.Message)
		}
		return &queryError{app: engine.Errorf(engine.EINVALID, "PostgreSQL rejected the query: %s. Fix it and query the views again.", pe.Message), kind: ErrInvalid}
	}
	return fmt.Errorf("query: %w", err)
}
