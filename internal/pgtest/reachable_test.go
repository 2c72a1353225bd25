package pgtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The postgres user must reach the cluster's directory: a folder of the
// project's that lets no one pass (root's ./data, 0750) is opened to
// passing through, never to reading; one outside the project is named in
// the error instead.
func TestReachable(t *testing.T) {
	root := t.TempDir()
	// The test's own folders (0700) let others pass, as /tmp does.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	project, outside := filepath.Join(root, "project"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(project, "data", "pg"), filepath.Join(outside, "pg")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{filepath.Join(project, "data"), outside} {
		if err := os.Chmod(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(project)
	if err := reachable(filepath.Join(project, "data", "pg"), "postgres"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(project, "data")); fi.Mode().Perm() != 0o751 {
		t.Errorf("./data is %v, want 0751 (others may pass, not read)", fi.Mode().Perm())
	}
	err := reachable(filepath.Join(outside, "pg"), "postgres")
	if err == nil || !strings.Contains(err.Error(), outside+" lets no other user pass") {
		t.Errorf("a folder outside the project: %v", err)
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o750 {
		t.Errorf("the folder outside the project was changed to %v", fi.Mode().Perm())
	}
}
