package dataset

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"modernc.org/sqlite"
)

// The authorizer asks SQLite itself what a statement will do, through the
// hook SQLite offers for untrusted SQL
// (https://www.sqlite.org/c3ref/set_authorizer.html): while it compiles a
// statement, SQLite presents every action to the policy, which may deny it,
// and a denied statement never runs. The policy lets a statement select,
// call functions other than the denied ones and read the curated views and
// the tables they are built on, in the main database, except their secret
// columns. Everything else is denied: writes, schema changes, PRAGMA,
// ATTACH and DETACH, transactions, and every other table, SQLite's own
// included. Every connection of the pool has it from its start (Open).

// secretColumns are never readable, even in a table a view reads.
var secretColumns = map[string][]string{
	"players":    {"token_hash"},
	"npcs":       {"secret"},
	"game_state": {"rng"},
	"tables":     {"invite_hash"},
}

// tableFunctions are table-valued functions a query may read: they read
// only their arguments.
var tableFunctions = map[string]bool{"json_each": true, "json_tree": true}

// policy is what the authorizer allows, read at Open.
type policy struct {
	// readable holds the lower-case names of the curated views, of the
	// tables they read and of tableFunctions.
	readable map[string]bool
	// objects holds the lower-case names of every schema object: a name
	// that is none of them, read with no column, is a CTE or a subquery.
	objects map[string]bool
}

// check returns nil if the policy allows the action SQLite presents, or a
// refusal for the model. The arguments are those of SQLite's authorizer
// callback; SQLite passes NULL as "".
func (p *policy) check(action sqlite.AuthorizerActionCode, arg1, arg2, db, _ string) error {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		return nil
	case sqlite.AuthFunction:
		if f := strings.ToLower(arg2); deniedFunctions[f] || strings.HasPrefix(f, "sqlite_") {
			return refusef("The function %s is not allowed. Use SQLite's ordinary functions over the views.", f)
		}
		return nil
	case sqlite.AuthRead:
		return p.read(strings.ToLower(arg1), strings.ToLower(arg2), db)
	case sqlite.AuthPragma:
		return refusef("PRAGMA is not allowed: this connection only reads the views. Send one SELECT statement over them.")
	case sqlite.AuthAttach, sqlite.AuthDetach:
		return refusef("only the main database's curated views may be read.")
	case sqlite.AuthTransaction, sqlite.AuthSavepoint:
		return refusef("the statement would open a transaction; this connection only reads. Send one SELECT over the views.")
	default:
		return refusef("the statement would change the database or the connection; this connection only reads. Send one SELECT over the views.")
	}
}

// read checks a read of column col of table (col is "" where SQLite reads
// no value: a count, a row of a CTE) in database db ("" for a CTE or a
// subquery).
func (p *policy) read(table, col, db string) error {
	if col == "" && db == "" && !p.objects[table] && !strings.HasPrefix(table, "sqlite_") {
		return nil // a CTE or a subquery; what it reads is checked on its own
	}
	if db != "main" && db != "" {
		return refusef("only the main database's curated views may be read.")
	}
	if !p.readable[table] {
		return refusef("the statement reads something outside the curated views. Query only the views.")
	}
	for _, s := range secretColumns[table] {
		if col == s {
			return refusef("the statement reads a secret column. Query only the views' columns.")
		}
	}
	return nil
}

// authorizer returns the policy as an authorizer callback. The first
// refusal of each statement is stored in *refused, if refused is not nil:
// the callback runs on the goroutine that prepares the statement.
func (p *policy) authorizer(refused *error) sqlite.AuthorizerFn {
	return func(action sqlite.AuthorizerActionCode, arg1, arg2, db, trigger string) sqlite.AuthorizerReturnCode {
		err := p.check(action, arg1, arg2, db, trigger)
		if err == nil {
			return sqlite.AuthorizerOK
		}
		if refused != nil && *refused == nil {
			*refused = err
		}
		return sqlite.AuthorizerDeny
	}
}

// install sets fn as the authorizer of the driver connection dc.
func install(dc any, fn sqlite.AuthorizerFn) error {
	r, ok := dc.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("driver connection %T has no authorizer", dc)
	}
	return r.RegisterAuthorizer(fn)
}

// authorizedDB opens a pool on dsn whose every connection has p's
// authorizer before any statement runs. Its driver is a Driver of its
// own, so the hook reaches no other connection of the process.
func authorizedDB(dsn string, p *policy) *sql.DB {
	drv := &sqlite.Driver{}
	drv.RegisterConnectionHook(func(conn sqlite.ExecQuerierContext, _ string) error {
		return install(conn, p.authorizer(nil))
	})
	return sql.OpenDB(connector{drv: drv, dsn: dsn})
}

// connector opens connections to dsn with drv.
type connector struct {
	drv *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.drv }

// loadPolicy reads what the policy needs on q, a connection with no
// authorizer: the names of the schema's objects, and the tables the views
// read, which SQLite presents to a recording authorizer while it compiles
// a SELECT of each view.
func loadPolicy(ctx context.Context, q *sql.Conn, views []string) (*policy, error) {
	p := &policy{readable: map[string]bool{}, objects: map[string]bool{}}
	rows, err := q.QueryContext(ctx, "SELECT name FROM sqlite_schema")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		p.objects[strings.ToLower(n)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for f := range tableFunctions {
		p.readable[f] = true
	}
	var secret error // a view that reads a secret column
	record := func(action sqlite.AuthorizerActionCode, table, col, db, _ string) sqlite.AuthorizerReturnCode {
		if action == sqlite.AuthRead && db == "main" {
			p.readable[strings.ToLower(table)] = true
			for _, s := range secretColumns[strings.ToLower(table)] {
				if strings.ToLower(col) == s && secret == nil {
					secret = fmt.Errorf("a view reads the secret column %s.%s", table, col)
				}
			}
		}
		return sqlite.AuthorizerOK
	}
	if err := q.Raw(func(dc any) error { return install(dc, record) }); err != nil {
		return nil, err
	}
	defer q.Raw(func(dc any) error { return install(dc, nil) })
	for _, v := range views {
		p.readable[strings.ToLower(v)] = true
		if _, err := columns(q, "SELECT * FROM "+v); err != nil {
			return nil, fmt.Errorf("compile view %s: %w", v, err)
		}
	}
	if secret != nil {
		return nil, secret
	}
	return p, nil
}
