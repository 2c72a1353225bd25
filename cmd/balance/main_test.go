package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run writes the Markdown table to -out: a heading per encounter, a row
// per party size played and one per party mix.
func TestRunWritesTheTable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "balance.md")
	if err := run(context.Background(), []string{"-fights", "2", "-sizes", "1", "-workers", "1", "-out", out}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{"# Balance", "## The Lantern of Greyhollow: The Old Mill", "| 1 |", "| warrior |", "| cleric |", "2 seeded fights"} {
		if !strings.Contains(md, want) {
			t.Errorf("the table lacks %q:\n%s", want, md)
		}
	}
	if err := run(context.Background(), []string{"-sizes", "5"}, nil); err == nil {
		t.Error("a party of five was accepted")
	}
	for _, bad := range []string{"3x", "1,2x", "", "one"} {
		if err := run(context.Background(), []string{"-sizes", bad, "-out", out}, nil); err == nil || !strings.Contains(err.Error(), "-sizes") {
			t.Errorf("-sizes %q: %v, want refused naming -sizes", bad, err)
		}
	}
}
