package jsonscan

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzStr: a document of one string reads as encoding/json reads it, and
// is refused where encoding/json refuses it (control characters, bad
// escapes, no closing quote).
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"plain"`, `"esc \"q\" \u00e9 \n"`, "\"tab\there\"", `"\x"`, `"open`, `""`, `"\\"`, `"\\\""`, `7`, `"ünï 🐉"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) {
			t.Skip("New wants valid UTF-8")
		}
		var want string
		wantOK := json.Unmarshal(b, &want) == nil
		s := New(b)
		got, ok := s.Str()
		ok = ok && s.Done()
		if wantOK && (!ok || string(got) != want) {
			t.Errorf("Str(%q) = %q, %v; want %q", b, got, ok, want)
		}
		if !wantOK && ok {
			t.Errorf("Str(%q) = %q, took what encoding/json refuses", b, got)
		}
	})
}
