package pgdb

import (
	"fmt"
	"testing"
)

// Every commit of a table goes through one writer (its chain, row cache
// and fence are that writer's), and the tables spread over all of them.
func TestWriterForKeepsATableOnOneWriter(t *testing.T) {
	d := &DB{}
	for range writerCount(16) {
		d.writers = append(d.writers, &committer{})
	}
	if len(d.writers) != 4 {
		t.Fatalf("%d writers for a pool of 16", len(d.writers))
	}
	used := map[*committer]int{}
	for i := range 200 {
		id := fmt.Sprintf("t-%016x", i*7919)
		w := d.writerFor(id)
		for range 3 {
			if d.writerFor(id) != w {
				t.Fatalf("table %s moved to another writer", id)
			}
		}
		used[w]++
	}
	for i, w := range d.writers {
		if used[w] < 20 {
			t.Errorf("writer %d runs %d of 200 tables", i, used[w])
		}
	}
}

func TestWriterCount(t *testing.T) {
	for conns, want := range map[int32]int{1: 1, 4: 1, 8: 2, 16: 4, 100: 4} {
		if got := writerCount(conns); got != want {
			t.Errorf("writerCount(%d) = %d, want %d", conns, got, want)
		}
	}
}
