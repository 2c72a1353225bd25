// Package golden compares what a test produced with a file under testdata/
// (STYLE.md: transcripts, snapshots, rendered pages and charts as golden
// files), so a change in what people read or see reaches review as a diff.
// Run the tests with -update to rewrite the files. Only tests import it.
package golden

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

// Updating reports whether the run rewrites golden files (-update).
func Updating() bool { return *update }

// Compare fails t unless got equals the file at path, naming the first
// line that differs. Under -update it writes got to path instead.
func Compare(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if line, g, w, differ := firstDiff(string(got), string(want)); differ {
		t.Errorf("%s differs at line %d (look at the change; go test -update accepts it):\n got: %s\nwant: %s", path, line, g, w)
	}
}

func firstDiff(got, want string) (line int, g, w string, differ bool) {
	if got == want {
		return 0, "", "", false
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		g, w = "", ""
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return i + 1, g, w, true
		}
	}
	return 0, "", "", false
}

var (
	// randomID matches an id made by internal/ident: a prefix, then 16 hex
	// digits of crypto/rand.
	randomID  = regexp.MustCompile(`\b([a-z]+)([-_])[0-9a-f]{16}\b`)
	timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
)

// Stable makes s independent of what a seed does not fix: random ids are
// renamed in order of first appearance (t-1, c-1, p_1…) and timestamps
// become 2026-01-01T00:00:00Z.
func Stable(s string) string {
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
