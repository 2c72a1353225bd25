package agent

import (
	"regexp"
	"testing"
)

// TestStripContextAsTheRegexp: StripContext removes exactly what the
// regular expression it replaced (for speed: it ran on every message of
// every window) removed, and playerWords finds what its expression found.
func TestStripContextAsTheRegexp(t *testing.T) {
	stale := regexp.MustCompile(`(?s)<context>\n.*?\n</context>\n?`)
	words := regexp.MustCompile(`(?s)<player_words>\n(.*)\n</player_words>`)
	cases := []string{
		"",
		"plain words",
		"<context>\n{}\n</context>\nI look around",
		"<context>\n{}\n</context>",
		"<context>\n</context>\nno block: the body is empty",
		"<context>\n\n</context>\nan empty body",
		"head\n<context>\n{\"a\":1}\n</context>\nmid\n<context>\n{\"b\":2}\n</context>\n\ntail",
		"<context>\nnever closed",
		"<context>\n<context>\nnested\n</context>\nafter",
		"<player_words>\nI open the door\n</player_words>",
		"turn\n<player_words>\nline one\nline two\n</player_words>\n<player_words>\nagain\n</player_words>",
		"<player_words>\nunclosed",
		"<player_words>\n\n</player_words>",
	}
	for _, c := range cases {
		if got, want := StripContext(c), stale.ReplaceAllString(c, ""); got != want {
			t.Errorf("StripContext(%q) = %q, want %q", c, got, want)
		}
		got, ok := playerWords(c)
		m := words.FindStringSubmatch(c)
		if ok != (m != nil) || (ok && got != m[1]) {
			t.Errorf("playerWords(%q) = %q %v, want %q", c, got, ok, m)
		}
	}
}
