package jsonstr

import (
	"encoding/json"
	"testing"
)

var cases = []string{"", "narration", "t12", `say "hi"\`, "<b>&</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
	"é – ü", "\u2028\u2029", "bad \xff utf8 \xe2\x82", "emoji 🐉"}

func TestAppendIsMarshal(t *testing.T) {
	for _, s := range cases {
		want, _ := json.Marshal(s)
		if got := Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("Append(%q) = %s, want %s", s, got[1:], want)
		}
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range cases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s); string(got) != string(want) {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	})
}
