package web_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tavern/internal/golden"
)

// TestTablePageGolden renders the table page a seated player opens and
// compares it with testdata/table_page.golden.html, so a change to what the
// page shows is a reviewable diff. Rewrite it with
// `go test ./web -run TestTablePageGolden -update`.
var staticVersionQuery = regexp.MustCompile(`\?v=[0-9a-f]+`)

func TestTablePageGolden(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "The Golden Table"})
	pid, tok := e.newPlayer("Ann")
	if r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior"}}, tok); r.status != 201 {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	e.arrive(id, pid) // the page shows the DM's arrival line
	r := e.do("GET", "/tables/"+id, nil, "", "Cookie", "tavern_player="+tok)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	// One element a line, so a change reads as a small diff; the static
	// files' version is left out (it changes with any of them).
	page := staticVersionQuery.ReplaceAllString(golden.Stable(string(r.body)), "?v=…")
	page = strings.ReplaceAll(page, "><", ">\n<")
	golden.Compare(t, filepath.Join("testdata", "table_page.golden.html"), []byte(page))
}
