package web

import (
	"testing"

	"tavern/internal/hub"
	"tavern/internal/store"
)

func TestErrorKinds(t *testing.T) {
	kinds := []string{store.CallTimeout, store.CallRateLimit, store.CallAuth}
	for _, c := range []struct {
		name string
		by   map[string]int
		want string
	}{
		{"none failed", map[string]int{}, ""},
		{"only the kinds that happened, in order", map[string]int{store.CallAuth: 1, store.CallTimeout: 2}, "timeout 2 · auth 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := hub.LLMGroup{}
			g.ErrorsByKind = c.by
			if got := errorKinds(g, kinds); got != c.want {
				t.Errorf("errorKinds = %q, want %q", got, c.want)
			}
		})
	}
}
