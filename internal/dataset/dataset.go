// Package dataset is the operator's read-only window on Tavern's database
// for the data agent (seed 003): curated views
// (migrations/0005_data_views.sql), described for a model's prompt, and a
// query runner that is safe by construction, plus [Analyst], which answers
// common questions without a model.
//
// Start with [Open], then [Dataset.Describe] for the prompt and
// [Dataset.Query] for the query_data tool. Query runs one read statement
// over the curated views only, on a separate connection that SQLite itself
// keeps read-only, under a deadline that interrupts it, a row cap and
// byte bounds (a cell cut at MaxCellBytes, rows at MaxResultBytes).
// Every refusal is an EINVALID *engine.Error (its message is a sentence a
// model can act on) that also matches [ErrRefused] with errors.Is.
//
// The layers, each enough on its own for writes and together for reads:
//   - the connection: mode=ro (every write fails with SQLITE_READONLY,
//     and no statement can undo it), query_only, defensive mode, no double-
//     quoted strings, ATTACH disabled by sqlite3_limit, bounded text length;
//   - the guard (guard.go): a tokenizer that accepts one SELECT/WITH/VALUES
//     statement and refuses write keywords, parameters, file and extension
//     functions and every name of a schema object other than the views,
//     whatever comments, quotes or strings surround it;
//   - the authorizer (authorizer.go): while SQLite compiles the
//     statement, it presents every action to a policy that allows only
//     selects, reads of the views and the tables under them (no secret
//     column), in the main database, and functions other than the denied
//     ones; a denied statement never runs;
//   - the run: the statement becomes the body of a CTE folded into one
//     JSON value by an aggregate, so all its work happens in the first
//     sqlite3_step. That matters: modernc.org/sqlite interrupts a query
//     (sqlite3_interrupt) when its context ends only while that first step
//     runs; later Rows.Next steps are not interrupted.
package dataset

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"tavern/internal/engine"
)

// Defaults of a Dataset's limits.
const (
	DefaultTimeout = 2 * time.Second
	DefaultMaxRows = 500
)

// Byte bounds of a Result (PROTOCOL.md, POST /api/admin/ask). Rows alone
// do not bound memory: one 16 MiB cell went into the stored conversation
// and back into every prompt, and the server grew from 31 to 395 MB.
const (
	// MaxCellBytes cuts a text cell: 64 KiB holds any narration, error or
	// prompt excerpt an operator reads in a table cell, and SQLite cuts it
	// before the row leaves the engine, so Go never holds the rest.
	MaxCellBytes = 64 << 10
	// MaxResultBytes bounds a whole result (its rows as JSON): rows past
	// it are left out. 2 MiB is 500 rows of 4 KiB, more than a page or a
	// chart uses, and keeps a question's memory small beside the server's.
	MaxResultBytes = 2 << 20
)

// maxLength bounds any string or blob a query makes (and so the JSON its
// rows are folded into): randomblob(1e9) fails instead of eating memory.
const maxLength = 16 << 20

// Sentinel errors callers branch on with errors.Is. Both come with an
// EINVALID *engine.Error whose message is meant for the model.
var (
	// ErrRefused: the statement was not run because it is not one read
	// statement over the curated views. Nothing changed.
	ErrRefused = errors.New("dataset: query refused")
	// ErrTimeout: the statement ran past the deadline and was interrupted.
	ErrTimeout = errors.New("dataset: query interrupted at the deadline")
	// ErrInvalid: SQLite rejected the statement (syntax, unknown column…).
	ErrInvalid = errors.New("dataset: query rejected by SQLite")
)

// queryError carries the model-facing *engine.Error and the sentinel.
type queryError struct {
	app  *engine.Error
	kind error
}

func (e *queryError) Error() string   { return e.app.Message }
func (e *queryError) Unwrap() []error { return []error{e.app, e.kind} }

// Dataset is a read-only connection pool to a Tavern database file. It is
// safe for concurrent use; set Timeout and MaxRows before sharing it.
type Dataset struct {
	// Timeout is each statement's deadline (default DefaultTimeout).
	Timeout time.Duration
	// MaxRows caps the rows a Result holds (default DefaultMaxRows).
	MaxRows int

	db     *sql.DB
	guard  *guard
	policy *policy
	// postgres: db is the data role's PostgreSQL pool (postgres.go).
	postgres bool
}

// readParams make SQLite itself refuse writes on the connection: mode=ro
// opens the file read-only (a PRAGMA cannot undo that, unlike query_only,
// which is set too); defensive mode blocks writable_schema and the like;
// _dqs=0 makes "x" always an identifier, as the guard reads it; with
// trusted_schema off, functions in the schema cannot run with side
// effects.
const readParams = "mode=ro&_defensive=1&_dqs=0&_pragma=busy_timeout(5000)&_pragma=query_only(1)&_pragma=trusted_schema(0)"

// poolSize is the number of connections queries share.
const poolSize = 2

// Open opens the Tavern database file at path read-only on connections of
// its own (never the game's), and checks that it holds every curated view
// with the catalogue's columns (the file must be migrated by
// internal/db.Open first). ctx bounds the checks. The caller must Close
// the Dataset.
func Open(ctx context.Context, path string) (*Dataset, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: readParams}
	dsn := u.String()
	// The checks read the schema, which the authorizer denies: they run
	// on a connection of their own, closed before any query.
	boot, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	g, p, err := load(ctx, boot)
	if cerr := boot.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	db := authorizedDB(dsn, p)
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	return &Dataset{Timeout: DefaultTimeout, MaxRows: DefaultMaxRows, db: db, guard: g, policy: p}, nil
}

// Close closes the connections; queries running finish first.
func (d *Dataset) Close() error { return d.db.Close() }

// load checks the views against the catalogue and reads the schema the
// guard and the authorizer need.
func load(ctx context.Context, db *sql.DB) (*guard, *policy, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	names := make([]string, len(catalogue))
	for i, v := range catalogue {
		names[i] = v.Name
		got, err := viewColumns(ctx, conn, v.Name)
		if err != nil {
			return nil, nil, err
		}
		want := make([]string, len(v.Columns))
		for j, c := range v.Columns {
			want[j] = c.Name
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return nil, nil, fmt.Errorf("view %s has columns %v, the catalogue %v", v.Name, got, want)
		}
	}
	p, err := loadPolicy(ctx, conn, names)
	if err != nil {
		return nil, nil, err
	}
	g := &guard{views: names, denied: map[string]bool{}}
	for n := range p.objects {
		if !isView(n) {
			g.denied[n] = true
		}
	}
	return g, p, nil
}

func isView(name string) bool {
	for _, v := range catalogue {
		if v.Name == name {
			return true
		}
	}
	return false
}

func viewColumns(ctx context.Context, q *sql.Conn, view string) ([]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", view)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", view, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("view %s is missing (is the database migrated?)", view)
	}
	return cols, rows.Err()
}

// Describe returns every curated view with its current row count, columns
// and meanings, in catalogue order; [Description.Text] renders it for a
// prompt. The caller owns the result.
func (d *Dataset) Describe(ctx context.Context) (Description, error) {
	out := Views()
	for i := range out {
		err := d.db.QueryRowContext(ctx, "SELECT count(*) FROM "+out[i].Name).Scan(&out[i].Rows)
		if err != nil {
			return nil, fmt.Errorf("describe %s: %w", out[i].Name, err)
		}
	}
	return out, nil
}

// Description is the curated views as the model sees them.
type Description []View

// Text renders the description as Markdown for a system prompt (seed 003's
// dataset_info): one bullet per view with its row count and meaning, then
// its columns with type and meaning.
func (ds Description) Text() string {
	var b strings.Builder
	for _, v := range ds {
		fmt.Fprintf(&b, "- **%s** (%d rows): %s\n", v.Name, v.Rows, v.Meaning)
		for _, c := range v.Columns {
			fmt.Fprintf(&b, "  - %s %s: %s\n", c.Name, c.Type, c.Meaning)
		}
	}
	return b.String()
}

// Result is the outcome of one query. Values in Rows are int64, float64,
// string or nil (NULL); a BLOB cannot be returned (select hex(x)).
type Result struct {
	// SQL is the statement that ran, as the guard accepted it.
	SQL     string   `json:"sql"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	// Truncated reports that something was left out: rows past a cap
	// (RowsCut says which) or the end of cells longer than MaxCellBytes
	// (listed in Cut).
	Truncated bool `json:"truncated"`
	// RowsCut is why rows were left out: CutRows (more than MaxRows;
	// Rows holds the first MaxRows), CutBytes (the rows after the first
	// MaxResultBytes), or "" when none were.
	RowsCut string `json:"rows_cut,omitempty"`
	// Cut lists the cells cut at MaxCellBytes, in row order.
	Cut []CellCut `json:"cut,omitempty"`
	// MaxRows is the row cap the query ran under.
	MaxRows int `json:"max_rows"`
}

// Why rows were left out of a Result.
const (
	CutRows  = "rows"
	CutBytes = "bytes"
)

// CellCut is a cell whose end was left out: Rows[Row][Column] holds its
// first Shown bytes (whole characters) of Bytes.
type CellCut struct {
	Row    int `json:"row"`
	Column int `json:"column"`
	Bytes  int `json:"bytes"`
	Shown  int `json:"shown"`
	// Marker is the note the model and the page show after the cell.
	Marker string `json:"marker"`
}

// cutMarker is the one rendering of a cut, for the model and the page.
func cutMarker(bytes, shown int) string {
	return fmt.Sprintf("…[cut: %s bytes, showing %s]", thousands(bytes), thousands(shown))
}

// thousands writes n with comma separators: 16,777,216.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Query runs sql, which must be one read statement (SELECT, WITH … SELECT
// or VALUES) over the curated views, and returns at most MaxRows rows,
// within MaxResultBytes, their text cells cut at MaxCellBytes; the Result
// marks what was left out.
// Errors: ErrRefused (not a single read statement over the views; nothing
// ran), ErrInvalid (SQLite rejected it), ErrTimeout (interrupted at the
// deadline) — each with an EINVALID *engine.Error for the model — or
// ctx's error, or an internal error.
func (d *Dataset) Query(ctx context.Context, sql string) (*Result, error) {
	body, err := d.guard.check(sql)
	if err != nil {
		return nil, err
	}
	if d.postgres {
		return d.runPostgres(ctx, body)
	}
	return d.run(ctx, body)
}

// run runs body, a statement the guard accepted, for Query.
func (d *Dataset) run(ctx context.Context, body string) (*Result, error) {
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer conn.Close()
	if err := limit(conn); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	// This query's authorizer keeps the reason of a denial for the model;
	// the connection gets the silent one back for its next user.
	var refused error
	if err := conn.Raw(func(dc any) error { return install(dc, d.policy.authorizer(&refused)) }); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	defer conn.Raw(func(dc any) error { return install(dc, d.policy.authorizer(nil)) })
	cols, err := columns(conn, body)
	switch {
	case refused != nil:
		return nil, refused
	case err != nil:
		return nil, invalid(err)
	}
	if len(cols) == 0 {
		return nil, refusef("the statement returns no columns; send a SELECT.")
	}
	max := d.MaxRows
	if max <= 0 {
		max = DefaultMaxRows
	}
	stmt := fold(body, len(cols), max+1)
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var folded string
	var total int
	err = conn.QueryRowContext(qctx, stmt).Scan(&folded, &total)
	switch {
	case refused != nil:
		return nil, refused
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("query: %w", ctx.Err())
	case err != nil && qctx.Err() != nil:
		return nil, &queryError{app: engine.Errorf(engine.EINVALID,
			"The query ran longer than %s and was stopped. Make it cheaper: filter earlier, aggregate, avoid recursive or cross joins.", timeout), kind: ErrTimeout}
	case err != nil:
		return nil, invalid(err)
	}
	r, err := decodeRows(folded)
	if err != nil {
		return nil, fmt.Errorf("query: decode rows: %w", err)
	}
	r.SQL, r.Columns, r.MaxRows = body, cols, max
	switch {
	case len(r.Rows) < total && len(r.Rows) < max:
		r.RowsCut = CutBytes
	case len(r.Rows) > max:
		r.Rows, r.RowsCut = r.Rows[:max], CutRows
	case total > max:
		r.RowsCut = CutRows
	}
	for len(r.Cut) > 0 && r.Cut[len(r.Cut)-1].Row >= len(r.Rows) {
		r.Cut = r.Cut[:len(r.Cut)-1]
	}
	r.Truncated = r.RowsCut != "" || len(r.Cut) > 0
	return r, nil
}

// limit applies the per-connection limits that have no DSN parameter.
// sqlite3_limit is idempotent and cheap, so every query sets them.
func limit(conn *sql.Conn) error {
	for _, l := range []struct{ id, v int }{
		{sqlite3.SQLITE_LIMIT_ATTACHED, 0},
		{sqlite3.SQLITE_LIMIT_LENGTH, maxLength},
		{sqlite3.SQLITE_LIMIT_SQL_LENGTH, 4 * maxSQL},
	} {
		if _, err := sqlite.Limit(conn, l.id, l.v); err != nil {
			return err
		}
	}
	return nil
}

// columns prepares body (nothing runs) and returns its column names.
func columns(conn *sql.Conn, body string) ([]string, error) {
	var names []string
	err := conn.Raw(func(dc any) error {
		ci, ok := dc.(interface {
			ColumnInfo(string) ([]sqlite.ColumnInfo, error)
		})
		if !ok {
			return fmt.Errorf("driver connection %T cannot describe columns", dc)
		}
		info, err := ci.ColumnInfo(body)
		for _, c := range info {
			names = append(names, c.Name)
		}
		return err
	})
	return names, err
}

// fold wraps body so that SQLite computes all of its rows (at most limit)
// inside one aggregate, in the first step, and returns them as one JSON
// array, and how many rows there were. body is a CTE's body: a CTE cannot
// hold anything but a select, which SQLite checks too.
//
// The byte bounds are kept inside SQLite, so no more than they allow
// reaches Go: a text cell longer than MaxCellBytes becomes its first
// MaxCellBytes bytes (the driver cannot read a value in parts, and SQLite
// holds the whole cell only while it cuts it), and rows stop where their
// running size passes MaxResultBytes. Each row is [[cells], [lengths]],
// the length of a cut cell and null for the others, or [[cells], null].
func fold(body string, ncols, limit int) string {
	cols, cells, lens, longs := make([]string, ncols), make([]string, ncols), make([]string, ncols), make([]string, ncols)
	for i := range cols {
		c := fmt.Sprintf("c%d", i)
		long := fmt.Sprintf("(typeof(%s) = 'text' AND octet_length(%s) > %d)", c, c, MaxCellBytes)
		cols[i], longs[i] = c, long
		cells[i] = fmt.Sprintf("CASE WHEN %s THEN CAST(substr(CAST(%s AS BLOB), 1, %d) AS TEXT) ELSE %s END", long, c, MaxCellBytes, c)
		lens[i] = fmt.Sprintf("CASE WHEN %s THEN octet_length(%s) END", long, c)
	}
	// OFFSET 0 keeps the limited select from being flattened into r__
	// (SQLite's flattening rule 14): it runs as a co-routine, so each of
	// the body's columns (a json_extract in most views) is computed once,
	// not once per reference below. The lengths are null in a row with
	// no cut cell, the common case.
	return fmt.Sprintf(`WITH q__(%s) AS (
%s
),
r__(j) AS (SELECT json_array(json_array(%s), CASE WHEN %s THEN json_array(%s) END) FROM (SELECT * FROM q__ LIMIT %d OFFSET 0)),
s__(j, n) AS (SELECT j, sum(octet_length(j)) OVER (ROWS UNBOUNDED PRECEDING) FROM r__)
SELECT '[' || coalesce(group_concat(j, ',') FILTER (WHERE n <= %d), '') || ']', count(*) FROM s__`,
		strings.Join(cols, ", "), body, strings.Join(cells, ", "), strings.Join(longs, " OR "), strings.Join(lens, ", "), limit, MaxResultBytes)
}

// decodeRows decodes fold's JSON into a Result's Rows and Cut.
func decodeRows(folded string) (*Result, error) {
	dec := json.NewDecoder(strings.NewReader(folded))
	dec.UseNumber()
	var raw [][2][]any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	r := &Result{Rows: make([][]any, len(raw))}
	for i, pair := range raw {
		row, lens := pair[0], pair[1]
		for j, v := range row {
			if n, ok := v.(json.Number); ok {
				row[j] = number(n)
			}
			if j >= len(lens) || lens[j] == nil {
				continue
			}
			n, _ := lens[j].(json.Number).Int64()
			text, _ := v.(string)
			text = whole(text)
			row[j] = text
			r.Cut = append(r.Cut, CellCut{Row: i, Column: j, Bytes: int(n), Shown: len(text), Marker: cutMarker(int(n), len(text))})
		}
		r.Rows[i] = row
	}
	return r, nil
}

// whole drops the end of a character that SQLite's byte cut split. The
// JSON decoder turned each of its k bytes into U+FFFD (3 bytes), so the
// text is MaxCellBytes+2k long.
func whole(text string) string {
	for k := (len(text) - MaxCellBytes) / 2; k > 0 && strings.HasSuffix(text, "\uFFFD"); k-- {
		text = strings.TrimSuffix(text, "\uFFFD")
	}
	return text
}

// number keeps SQLite's integer/real distinction: json_array writes reals
// with a fraction or an exponent.
func number(n json.Number) any {
	if !strings.ContainsAny(n.String(), ".eE") {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	f, _ := n.Float64()
	return f
}

// invalid turns SQLite's rejection of a statement into a message for the
// model.
func invalid(err error) error {
	msg := err.Error()
	var se *sqlite.Error
	if errors.As(err, &se) {
		msg = se.Error()
	}
	msg = strings.ReplaceAll(msg, "q__", "query")
	return &queryError{app: engine.Errorf(engine.EINVALID, "SQLite rejected the query: %s. Fix it and query the views again.", msg), kind: ErrInvalid}
}
