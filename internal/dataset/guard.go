package dataset

import (
	"slices"
	"strings"

	"tavern/internal/engine"
)

// The guard is the first of the query's checks: a tokenizer that follows
// SQLite's own (tokenize.c) closely enough that comments, strings and
// quoted identifiers cannot hide a keyword or a name from it. It refuses
// with sentences a model can act on. The authorizer (authorizer.go) and the
// connection's own restrictions (mode=ro, query_only, no ATTACH) back it.

type tokenKind int

const (
	tkWord   tokenKind = iota // bare identifier or keyword
	tkQuoted                  // "ident", [ident] or `ident`
	tkString                  // 'text'
	tkNumber
	tkBlob // x'..'
	tkVar  // ?, ?1, :name, @name, $name
	tkPunct
)

type token struct {
	kind       tokenKind
	text       string // the identifier or string without quotes; punctuation as is
	start, end int    // byte offsets in the SQL
}

// maxSQL bounds the statement a model may send.
const maxSQL = 20000

// writeWords are keywords that only appear in statements that change the
// database, its schema or the connection. REPLACE is also a function; as a
// function it is followed by "(".
var writeWords = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true, "UPSERT": true,
	"CREATE": true, "DROP": true, "ALTER": true, "ATTACH": true, "DETACH": true,
	"PRAGMA": true, "VACUUM": true, "REINDEX": true, "ANALYZE": true,
	"BEGIN": true, "COMMIT": true, "ROLLBACK": true, "SAVEPOINT": true,
	"RELEASE": true, "TRANSACTION": true, "RETURNING": true,
}

// deniedFunctions read files, load code or reach into SQLite's internals.
var deniedFunctions = map[string]bool{
	"load_extension": true, "readfile": true, "writefile": true, "edit": true,
	"fts3_tokenizer": true, "zipfile": true, "sqlar_compress": true, "sqlar_uncompress": true,
}

// deniedPrefixes name SQLite's internal tables and table-valued pragmas.
var deniedPrefixes = []string{"sqlite_", "pragma_"}

// deniedNames are eponymous virtual tables that read the file below SQL.
var deniedNames = map[string]bool{"dbstat": true, "fts5vocab": true}

// guard checks statements against the curated views.
type guard struct {
	views  []string        // allowed view names, for messages
	denied map[string]bool // lower-case names of every other schema object
	// prefixes are denied beside deniedPrefixes (PostgreSQL's catalogs:
	// postgres.go).
	prefixes []string
}

// check returns the statement's text without trailing semicolons and
// comments, or a refusal explaining what to change.
func (g *guard) check(sql string) (string, error) {
	if len(sql) > maxSQL {
		return "", refusef("The query is %d characters long; the limit is %d. Send a shorter SELECT.", len(sql), maxSQL)
	}
	toks, err := tokenize(sql)
	if err != nil {
		return "", err
	}
	for len(toks) > 0 && toks[len(toks)-1].text == ";" && toks[len(toks)-1].kind == tkPunct {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return "", refusef("The query is empty. Send one SELECT statement over the views %s.", g.viewList())
	}
	first := toks[0]
	if first.kind != tkWord || !slices.Contains([]string{"SELECT", "WITH", "VALUES"}, strings.ToUpper(first.text)) {
		if first.kind == tkWord && writeWords[strings.ToUpper(first.text)] {
			return "", refusef("%s is not allowed: this connection only reads. Send one SELECT statement over the views %s.", strings.ToUpper(first.text), g.viewList())
		}
		return "", refusef("Only a SELECT (or WITH … SELECT) statement is allowed; the query starts with %q.", sql[first.start:first.end])
	}
	depth := 0
	for i, t := range toks {
		switch t.kind {
		case tkPunct:
			switch t.text {
			case ";":
				return "", refusef("Only one statement is allowed: remove the ';' and everything after it, or send the statements one at a time.")
			case "(":
				depth++
			case ")":
				depth--
				if depth < 0 {
					return "", refusef("The query has a ')' without a matching '('.")
				}
			}
		case tkVar:
			return "", refusef("Parameters such as %s are not supported: write the values into the query.", t.text)
		case tkWord:
			up := strings.ToUpper(t.text)
			call := i+1 < len(toks) && toks[i+1].kind == tkPunct && toks[i+1].text == "("
			if writeWords[up] && !(up == "REPLACE" && call) {
				return "", refusef("%s is not allowed: this connection only reads. Send one SELECT statement over the views %s.", up, g.viewList())
			}
			if call && deniedFunctions[strings.ToLower(t.text)] {
				return "", refusef("The function %s is not allowed. Use SQLite's ordinary functions over the views.", strings.ToLower(t.text))
			}
			if err := g.name(t.text); err != nil {
				return "", err
			}
		case tkQuoted, tkString:
			if err := g.name(t.text); err != nil {
				return "", err
			}
		}
	}
	if depth != 0 {
		return "", refusef("The query has a '(' without a matching ')'.")
	}
	return sql[first.start:toks[len(toks)-1].end], nil
}

// name refuses a name (identifier or string, which SQLite may read as an
// identifier) that denotes anything but a curated view.
func (g *guard) name(s string) error {
	l := strings.ToLower(s)
	denied := g.denied[l] || deniedNames[l] || deniedFunctions[l]
	for _, p := range deniedPrefixes {
		denied = denied || strings.HasPrefix(l, p)
	}
	for _, p := range g.prefixes {
		denied = denied || strings.HasPrefix(l, p)
	}
	if denied {
		return refusef("%q is not readable here: only the curated views %s may be queried. Rewrite the query over them.", s, g.viewList())
	}
	return nil
}

func (g *guard) viewList() string { return strings.Join(g.views, ", ") }

// tokenize splits sql into tokens, dropping whitespace and comments. An
// unterminated string or quoted identifier is refused; an unterminated
// block comment runs to the end, as in SQLite.
func tokenize(sql string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += 2 + end + 2
			}
		case c == '\'':
			s, n, ok := quoted(sql[i:], '\'', '\'')
			if !ok {
				return nil, refusef("A string literal starting at character %d is not closed.", i+1)
			}
			toks = append(toks, token{kind: tkString, text: s, start: start, end: i + n})
			i += n
		case c == '"' || c == '`':
			s, n, ok := quoted(sql[i:], c, c)
			if !ok {
				return nil, refusef("A quoted name starting at character %d is not closed.", i+1)
			}
			toks = append(toks, token{kind: tkQuoted, text: s, start: start, end: i + n})
			i += n
		case c == '[':
			end := strings.IndexByte(sql[i:], ']')
			if end < 0 {
				return nil, refusef("A [name] starting at character %d is not closed.", i+1)
			}
			toks = append(toks, token{kind: tkQuoted, text: sql[i+1 : i+end], start: start, end: i + end + 1})
			i += end + 1
		case (c == 'x' || c == 'X') && i+1 < len(sql) && sql[i+1] == '\'':
			_, n, ok := quoted(sql[i+1:], '\'', 0)
			if !ok {
				return nil, refusef("A blob literal starting at character %d is not closed.", i+1)
			}
			toks = append(toks, token{kind: tkBlob, text: sql[i : i+1+n], start: start, end: i + 1 + n})
			i += 1 + n
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			for i < len(sql) && (isIdent(sql[i]) || sql[i] == '.' ||
				((sql[i] == '+' || sql[i] == '-') && (sql[i-1] == 'e' || sql[i-1] == 'E'))) {
				i++
			}
			toks = append(toks, token{kind: tkNumber, text: sql[start:i], start: start, end: i})
		case c == '?' || c == ':' || c == '@' || c == '$' || c == '#':
			i++
			for i < len(sql) && isIdent(sql[i]) {
				i++
			}
			if c == ':' && i == start+1 {
				toks = append(toks, token{kind: tkPunct, text: ":", start: start, end: i})
				continue
			}
			toks = append(toks, token{kind: tkVar, text: sql[start:i], start: start, end: i})
		case isIdent(c):
			for i < len(sql) && (isIdent(sql[i]) || sql[i] == '$') {
				i++
			}
			toks = append(toks, token{kind: tkWord, text: sql[start:i], start: start, end: i})
		default:
			i++
			toks = append(toks, token{kind: tkPunct, text: string(c), start: start, end: i})
		}
	}
	return toks, nil
}

// quoted reads a token quoted by q at the start of s, where a doubled q
// stands for one (esc == q) or no escape exists (esc == 0). It returns the
// unquoted text and the token's length.
func quoted(s string, q, esc byte) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if esc != 0 && i+1 < len(s) && s[i+1] == esc {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdent reports bytes SQLite accepts in an identifier; bytes of UTF-8
// sequences (>= 0x80) count, as in SQLite.
func isIdent(c byte) bool {
	return c == '_' || c >= 0x80 || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// refusef returns a refusal: an EINVALID *engine.Error wrapping
// ErrRefused, whose message is meant for the model.
func refusef(format string, args ...any) error {
	return &queryError{app: engine.Errorf(engine.EINVALID, "Refused: "+format, args...), kind: ErrRefused}
}
