package adventures

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"tavern/internal/engine"
)

// Limits of one adventure (PROTOCOL.md "Adventures").
const (
	MaxBytes     = 256 << 10
	MaxLocations = 300
	MaxNPCs      = 300
	// MaxItems bounds item templates, placed items and shop stock together.
	MaxItems = 500
)

// Text limits, in characters, by field. The JSON Schema carries them too
// (schema.go), so an editor can check as the server does.
const (
	maxID      = 40
	maxName    = 80
	maxShort   = 300 // summary, personality, tactics, secret, a line
	maxLong    = 2000
	maxCount   = 50 // one stock line
	maxLevel   = 20
	maxStat    = 30
	maxPower   = 24
	maxTraitsN = 20 // lines per NPC
)

// Problem is one mistake in an adventure: where it is (1-based line, 0 if
// the whole document; path as locations[2].exits[0].to) and a sentence
// saying how to fix it.
type Problem struct {
	Line    int    `json:"line"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// ProblemsError is the error of an adventure that does not validate: every
// problem found, in line order.
type ProblemsError struct{ Problems []Problem }

func (e *ProblemsError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "line %d: %s: %s", p.Line, p.Path, p.Message)
	}
	return b.String()
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Parse reads an adventure in the adventure format and checks it against
// the catalogue. It returns every problem at once; the adventure is nil
// when there are any. Nothing in src is executed: YAML is read as plain
// data into the engine's types (no tags, no custom decoders), and its text
// is only ever shown escaped.
func Parse(src []byte, cat *engine.Catalogue) (*engine.Adventure, []Problem) {
	if len(src) > MaxBytes {
		return nil, []Problem{{Line: 0, Path: "", Message: fmt.Sprintf("The adventure is %d KiB; the limit is %d KiB. Shorten descriptions or split it into two adventures.", (len(src)+1023)/1024, MaxBytes>>10)}}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, []Problem{yamlProblem(err)}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, []Problem{{Line: max(1, root.Line), Message: "An adventure is a YAML mapping: start with lines such as \"id: my-adventure\" and \"name: My Adventure\"."}}
	}
	c := &checker{lines: map[string]int{}, cat: cat}
	c.index(root.Content[0], "")
	var a engine.Adventure
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil {
		c.decodeProblems(err)
	}
	c.check(&a)
	if len(c.problems) > 0 {
		sort.SliceStable(c.problems, func(i, j int) bool { return c.problems[i].Line < c.problems[j].Line })
		return nil, c.problems
	}
	return &a, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlProblem turns a YAML syntax error into a problem on its line.
func yamlProblem(err error) Problem {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		if parserError(m[2]) {
			n++ // yaml.v3 counts a parser error's line from 0, a scanner's from 1
		}
		return Problem{Line: n, Message: "YAML syntax error: " + m[2] + ". Check the indentation and the quotes on this line and the one before it."}
	}
	return Problem{Line: 1, Message: "YAML syntax error: " + strings.TrimPrefix(msg, "yaml: ") + "."}
}

// parserError reports whether msg is one of yaml.v3's parser errors
// (parserc.go), whose line it reports one too low.
func parserError(msg string) bool {
	for _, p := range []string{"did not find expected <document start>", "did not find expected node content",
		"did not find expected key", "did not find expected '-' indicator", "did not find expected ',' or ']'",
		"did not find expected ',' or '}'"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

var (
	typeLineRE     = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type engine\.(\w+)$`)
	cannotRE       = regexp.MustCompile(`^cannot unmarshal !!(\w+) ` + "`" + `?(.*?)` + "`" + `? into (\S+)$`)
)

// decodeProblems turns the decoder's type errors (unknown fields, a word
// where a number goes) into problems on their lines.
func (c *checker) decodeProblems(err error) {
	te, ok := err.(*yaml.TypeError)
	if !ok {
		c.problems = append(c.problems, yamlProblem(err))
		return
	}
	for _, e := range te.Errors {
		m := typeLineRE.FindStringSubmatch(e)
		if m == nil {
			c.problems = append(c.problems, Problem{Line: 1, Message: e})
			continue
		}
		line, _ := strconv.Atoi(m[1])
		msg := m[2]
		if f := unknownFieldRE.FindStringSubmatch(msg); f != nil {
			msg = fmt.Sprintf("Unknown field %q in %s. Check its spelling; the fields of %s are listed in docs/adventures.md.", f[1], typeWord(f[2]), typeWord(f[2]))
		} else if f := cannotRE.FindStringSubmatch(msg); f != nil {
			msg = fmt.Sprintf("%q is not %s. Write %s here.", f[2], goTypeWord(f[3]), goTypeWord(f[3]))
		}
		c.problems = append(c.problems, Problem{Line: line, Path: c.pathAt(line), Message: msg})
	}
}

func typeWord(t string) string {
	switch t {
	case "Adventure":
		return "the adventure"
	case "NPC":
		return "an NPC"
	case "ItemTemplate":
		return "an item template"
	case "StockEntry":
		return "a stock line"
	}
	return "a " + strings.ToLower(t)
}

func goTypeWord(t string) string {
	switch {
	case t == "int":
		return "a whole number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "text"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map"):
		return "a mapping of names to text"
	}
	return "a mapping (fields indented under it)"
}

type linePath struct {
	line int
	path string
}

// checker collects problems, with the line of each path.
type checker struct {
	lines    map[string]int
	byLine   []linePath // in document order, for pathAt
	cat      *engine.Catalogue
	problems []Problem
}

// index records the line of every path in the document.
func (c *checker) index(n *yaml.Node, path string) {
	if _, ok := c.lines[path]; !ok {
		c.lines[path] = n.Line
		c.byLine = append(c.byLine, linePath{n.Line, path})
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			c.lines[p] = k.Line
			c.byLine = append(c.byLine, linePath{k.Line, p})
			c.index(v, p)
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			c.index(e, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

// pathAt is the deepest path that starts on line, for the decoder's
// errors, which only know lines.
func (c *checker) pathAt(line int) string {
	best := ""
	for _, e := range c.byLine {
		if e.line == line && len(e.path) > len(best) {
			best = e.path
		}
	}
	return best
}

// add reports a problem at path: its line is the path's, or the nearest
// enclosing path's.
func (c *checker) add(path, format string, args ...any) {
	line := 0
	for p := path; ; {
		if l, ok := c.lines[p]; ok {
			line = l
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			if l, ok := c.lines[""]; ok {
				line = l
			}
			break
		}
		p = p[:i]
	}
	for _, p := range c.problems {
		if p.Path == path && path != "" {
			return // one problem a field: a word where a number goes reads as 0 too
		}
	}
	c.problems = append(c.problems, Problem{Line: max(line, 1), Path: path, Message: fmt.Sprintf(format, args...)})
}

// text checks a text field: required or not, at most limit characters, no
// control characters but newlines and tabs.
func (c *checker) text(path, what, v string, limit int, required bool) {
	if strings.TrimSpace(v) == "" {
		if required {
			c.add(path, "%s is missing. Add a line \"%s: ...\" here.", what, lastKey(path))
		}
		return
	}
	if n := len([]rune(v)); n > limit {
		c.add(path, "%s is %d characters; the limit is %d. Shorten it.", what, n, limit)
	}
	for _, r := range v {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			c.add(path, "%s holds a control character (U+%04X). Remove it.", what, r)
			return
		}
	}
}

// id checks an id: required, short, lower-case letters, digits, - and _.
func (c *checker) id(path, what, v string) {
	switch {
	case v == "":
		c.add(path, "%s needs an id. Add \"id: some-name\" (lower-case letters, digits and dashes).", what)
	case len(v) > maxID:
		c.add(path, "The id %q is %d characters; the limit is %d. Shorten it.", v, len(v), maxID)
	case !idRE.MatchString(v):
		c.add(path, "The id %q may only hold lower-case letters, digits, - and _. Try %q.", v, engine.Slug(v, func(string) bool { return false }))
	}
}

// unique records ids of one kind and reports a second use.
type unique map[string]string // id -> path of its first use

func (c *checker) unique(u unique, path, what, id string) bool {
	if id == "" {
		return false
	}
	if first, ok := u[id]; ok {
		c.add(path, "Another %s already has the id %q (line %d). Give each %s its own id.", what, id, c.lines[first], what)
		return false
	}
	u[id] = path
	return true
}

func lastKey(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}

// known lists ids for a message, sorted, at most eight.
func known(u unique) string {
	ids := make([]string, 0, len(u))
	for id := range u {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return "(none yet)"
	}
	if len(ids) > 8 {
		return strings.Join(ids[:8], ", ") + ", …"
	}
	return strings.Join(ids, ", ")
}
