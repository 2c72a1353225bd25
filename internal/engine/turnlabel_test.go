package engine

import "testing"

func TestTurnLabel(t *testing.T) {
	for _, n := range []int{1, 9, 12, 1000} {
		got, ok := ParseTurn(TurnLabel(n))
		if !ok || got != n {
			t.Errorf("ParseTurn(TurnLabel(%d)) = %d, %v", n, got, ok)
		}
	}
	for _, bad := range []string{"", "t", "12", "t0", "t-3", "tx", "T4", "t4a"} {
		if n, ok := ParseTurn(bad); ok {
			t.Errorf("ParseTurn(%q) = %d, true; want false", bad, n)
		}
	}
}
