package engine

import (
	"strconv"
	"strings"
)

// TurnLabel is the turn id events and model calls carry for turn n
// (Event.Turn): "t12".
func TurnLabel(n int) string { return "t" + strconv.Itoa(n) }

// ParseTurn reads a turn id made by TurnLabel; ok is false for anything
// else (an empty or malformed label, a turn below 1).
func ParseTurn(label string) (n int, ok bool) {
	rest, found := strings.CutPrefix(label, "t")
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}
