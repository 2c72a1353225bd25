package openai

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNarrationScanner(t *testing.T) {
	cases := []struct {
		name string
		args any
		want string
	}{
		{"plain", map[string]any{"narration": "The door creaks open."}, "The door creaks open."},
		{"after other keys", map[string]any{"foes": []string{"a", "narration"}, "hints": []string{"x"}, "narration": "Snikket \"the Quick\" snarls.\nRun!"}, "Snikket \"the Quick\" snarls.\nRun!"},
		{"unicode", map[string]any{"narration": "Élodie sourit — 🐺 hurle\t\\o/"}, "Élodie sourit — 🐺 hurle\t\\o/"},
		{"nested narration key ignored", map[string]any{"x": map[string]any{"narration": "no"}, "narration": "yes"}, "yes"},
		{"none", map[string]any{"outcome": "player_win"}, ""},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw, _ := json.Marshal(c.args)
			// ASCII-escape some runes too, as some servers do.
			variants := []string{string(raw), strings.ReplaceAll(string(raw), "🐺", `\ud83d\udc3a`)}
			for _, s := range variants {
				for range 50 {
					var sc narrationScanner
					var got strings.Builder
					for rest := s; rest != ""; {
						n := min(len(rest), 1+rng.IntN(6))
						got.WriteString(sc.feed(rest[:n]))
						rest = rest[n:]
					}
					if got.String() != c.want {
						t.Fatalf("got %q, want %q (from %s)", got.String(), c.want, s)
					}
				}
			}
		})
	}
}
