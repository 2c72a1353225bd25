package web

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestTablePageGolden renders the table page a seated player opens and
// compares it with testdata/table_page.golden.html, so a change to what the
// page shows is a reviewable diff. Rewrite it with
// `go test ./web -run TestTablePageGolden -update`.
func TestTablePageGolden(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "The Golden Table"})
	_, tok := e.newPlayer("Ann")
	if r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior"}}, tok); r.status != 201 {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	r := e.do("GET", "/tables/"+id, nil, "", "Cookie", "tavern_player="+tok)
	if r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	// One element a line, so a change reads as a small diff.
	page := strings.ReplaceAll(stable(string(r.body)), "><", ">\n<")
	compareGolden(t, filepath.Join("testdata", "table_page.golden.html"), page)
}

var (
	randomID  = regexp.MustCompile(`\b([a-z]+)([-_])[0-9a-f]{16}\b`)
	timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// stable renames random ids in order of first appearance (t-1, p_1, …) and
// blanks timestamps: what the seed does not fix.
func stable(s string) string {
	seen, count := map[string]string{}, map[string]int{}
	s = randomID.ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := seen[id]; ok {
			return r
		}
		m := randomID.FindStringSubmatch(id)
		count[m[1]]++
		seen[id] = fmt.Sprintf("%s%s%d", m[1], m[2], count[m[1]])
		return seen[id]
	})
	return timestamp.ReplaceAllString(s, "2026-01-01T00:00:00Z")
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs at line %d (run with -update to accept):\n got: %s\nwant: %s", path, i+1, g, w)
		}
	}
}
