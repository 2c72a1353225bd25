package engine

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCheckJSON: whatever CheckJSON lets through decodes without
// encoding/json inventing a U+FFFD that the sender did not write.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`"hi"`, `"\ud800"`, `"\ud83c\udf7a"`, `"\\ud800"`, `"\udc00\ud800"`, `"\ufffd"`, "\"caf\xe9\"", `"\uD800\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s string
		if CheckJSON(data) != nil || json.Unmarshal(data, &s) != nil {
			return
		}
		sent := bytes.Contains(data, []byte("\uFFFD")) || bytes.Contains(bytes.ToLower(data), []byte(`\ufffd`))
		if strings.ContainsRune(s, '\uFFFD') && !sent {
			t.Errorf("CheckJSON passed %q, which decodes to %q with a U+FFFD not sent", data, s)
		}
	})
}
