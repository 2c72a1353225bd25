package hub

import (
	"testing"
	"time"
)

// TestDMBackoff: the wait after a DM turn's n-th failure in a row doubles
// from 1 s and never passes the cap, however long the failures go on.
func TestDMBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		if got := dmBackoff(i + 1); got != w {
			t.Errorf("dmBackoff(%d) = %v, want %v", i+1, got, w)
		}
	}
	for _, n := range []int{8, 40, 64, 1000} {
		if got := dmBackoff(n); got != dmBackoffMax {
			t.Errorf("dmBackoff(%d) = %v, want the cap", n, got)
		}
	}
}
