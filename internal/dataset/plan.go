package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The plan check asks SQLite itself what a statement will do: it compiles
// the statement with EXPLAIN (which runs nothing) and reads the bytecode.
// A statement passes only if it opens no b-tree for writing, starts no
// write transaction, touches no schema or connection state, opens only the
// tables and indexes the curated views are built on, in the main
// database, and never reads a secret column. The driver exposes no
// sqlite3_set_authorizer, so this is how SQLite's own compiler gets the
// last word over the tokenizer's (guard.go).

// writeOps are VDBE opcodes of statements that write or change the
// connection. Insert, Delete and IdxInsert are not among them: read
// queries use them on ephemeral tables (DISTINCT, IN lists, UNION), and
// a real table can only be written through a cursor from OpenWrite.
var writeOps = map[string]bool{
	"OpenWrite": true, "VUpdate": true, "Destroy": true, "Clear": true, "CreateBtree": true,
	"SqlExec": true, "ParseSchema": true, "DropTable": true, "DropIndex": true, "DropTrigger": true,
	"Vacuum": true, "IncrVacuum": true, "JournalMode": true, "AutoCommit": true, "Savepoint": true,
	"Checkpoint": true, "SetCookie": true, "VCreate": true, "VDestroy": true, "VRename": true,
	"Expire": true, "LoadAnalysis": true, "MaxPgcnt": true, "Pagecount": true, "IntegrityCk": true,
}

// schema is what the plan check knows of the database, read at Open.
type schema struct {
	// allowed maps the root page of each table and index the views read
	// to its name.
	allowed map[int64]string
	// secret maps a table's root page to the column numbers no query
	// may read.
	secret map[int64]map[int64]string
	// secretIndex holds the root pages of indexes whose key has a secret
	// column: seeking in them would test guesses of the secret.
	secretIndex map[int64]bool
}

// seekOps compare a search key with an index cursor's key.
var seekOps = map[string]bool{
	"SeekGE": true, "SeekGT": true, "SeekLE": true, "SeekLT": true, "SeekScan": true,
	"IdxGE": true, "IdxGT": true, "IdxLE": true, "IdxLT": true,
	"Found": true, "NotFound": true, "NoConflict": true, "IfNoHope": true,
}

// secretColumns are never readable, even through a table a view reads.
var secretColumns = map[string][]string{
	"players":    {"token_hash"},
	"npcs":       {"secret"},
	"game_state": {"rng"},
}

// op is one row of EXPLAIN output.
type op struct {
	addr       int64
	name       string
	p1, p2, p3 int64
	p4         string
}

func explain(ctx context.Context, q queryer, stmt string) ([]op, error) {
	rows, err := q.QueryContext(ctx, "EXPLAIN "+stmt)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ops []op
	for rows.Next() {
		var o op
		var p4, comment sql.NullString
		var p5 sql.NullInt64
		if err := rows.Scan(&o.addr, &o.name, &o.p1, &o.p2, &o.p3, &p4, &p5, &comment); err != nil {
			return nil, err
		}
		o.p4 = p4.String
		ops = append(ops, o)
	}
	return ops, rows.Err()
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// checkPlan refuses a compiled statement that could write, leave the main
// database, open anything the views are not built on, or read a secret.
func (s *schema) checkPlan(ops []op) error {
	cursors := map[int64]int64{} // cursor → root page; 0 for other cursors
	for _, o := range ops {
		switch {
		case writeOps[o.name]:
			return refusef("the statement would change the database or the connection (%s); this connection only reads. Send one SELECT over the views.", o.name)
		case o.name == "Transaction" && o.p2 != 0:
			return refusef("the statement would open a write transaction; this connection only reads. Send one SELECT over the views.")
		case o.name == "Function" || o.name == "PureFunc":
			if f := funcName(o.p4); deniedFunctions[f] || strings.HasPrefix(f, "sqlite_") {
				return refusef("The function %s is not allowed. Use SQLite's ordinary functions over the views.", f)
			}
		case o.name == "OpenRead" || o.name == "ReopenIdx":
			if o.p3 != 0 {
				return refusef("only the main database's curated views may be read.")
			}
			if _, ok := s.allowed[o.p2]; !ok {
				return refusef("the statement reads something outside the curated views. Query only the views.")
			}
			cursors[o.p1] = o.p2
		case o.name == "OpenDup":
			if root, ok := cursors[o.p2]; ok {
				cursors[o.p1] = root
			}
		case o.name == "Column":
			if cols, ok := s.secret[cursors[o.p1]]; ok {
				if _, bad := cols[o.p2]; bad {
					return refusef("the statement reads a secret column. Query only the views' columns.")
				}
			}
		case seekOps[o.name] && s.secretIndex[cursors[o.p1]]:
			return refusef("the statement searches a secret column. Query only the views' columns.")
		case o.name == "RowData" || o.name == "RowCell":
			if _, ok := s.secret[cursors[o.p1]]; ok {
				return refusef("the statement copies whole rows of a table with secrets. Query only the views' columns.")
			}
		}
	}
	return nil
}

// funcName returns the lower-case function name of a Function opcode's P4,
// which EXPLAIN prints as "name(nargs)".
func funcName(p4 string) string {
	name, _, _ := strings.Cut(p4, "(")
	return strings.ToLower(strings.TrimSpace(name))
}

// loadSchema reads what the plan check needs: the objects under the views,
// minus indexes over secret columns, and the secret columns' numbers.
func loadSchema(ctx context.Context, q queryer, views []string) (*schema, error) {
	type object struct{ typ, name, table string }
	objects := map[int64]object{}
	rows, err := q.QueryContext(ctx, "SELECT type, name, tbl_name, rootpage FROM sqlite_schema WHERE rootpage > 0")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var o object
		var root int64
		if err := rows.Scan(&o.typ, &o.name, &o.table, &root); err != nil {
			rows.Close()
			return nil, err
		}
		objects[root] = o
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	tables := map[string]bool{}
	for _, v := range views {
		ops, err := explain(ctx, q, "SELECT * FROM "+v)
		if err != nil {
			return nil, fmt.Errorf("plan of view %s: %w", v, err)
		}
		for _, o := range ops {
			if o.name == "OpenRead" && o.p3 == 0 {
				tables[objects[o.p2].table] = true
			}
		}
	}
	s := &schema{allowed: map[int64]string{}, secret: map[int64]map[int64]string{}, secretIndex: map[int64]bool{}}
	for root, o := range objects {
		if !tables[o.table] {
			continue
		}
		secrets := secretColumns[o.table]
		if o.typ == "table" {
			s.allowed[root] = o.name
			if len(secrets) > 0 {
				cols, err := columnNumbers(ctx, q, "table_info", o.name, secrets)
				if err != nil {
					return nil, err
				}
				s.secret[root] = cols
			}
			continue
		}
		// An index over a secret column may serve count(*) or a scan, but
		// its secret key is neither read (Column) nor searched (seeks).
		cols, err := columnNumbers(ctx, q, "index_info", o.name, secrets)
		if err != nil {
			return nil, err
		}
		s.allowed[root] = o.name
		if len(cols) > 0 {
			s.secret[root] = cols
			s.secretIndex[root] = true
		}
	}
	return s, nil
}

// columnNumbers returns which of names are columns of the table or index
// (pragma table_info or index_info), by their number there.
func columnNumbers(ctx context.Context, q queryer, pragma, object string, names []string) (map[int64]string, error) {
	out := map[int64]string{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, "SELECT * FROM pragma_"+pragma+"(?)", object)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		// table_info: cid, name, …; index_info: seqno, cid, name.
		num, name := vals[0], vals[1]
		if pragma == "index_info" {
			name = vals[2]
		}
		n, _ := num.(int64)
		if s, ok := name.(string); ok {
			for _, want := range names {
				if s == want {
					out[n] = s
				}
			}
		}
	}
	return out, rows.Err()
}
