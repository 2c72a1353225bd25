package hub

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// The hand-built JSON of the say path is byte for byte encoding/json's.
var jsonStrings = []string{"", "a1", "fo17", `say "hi"\`, "<b>&</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
	"é – ü", "\u2028\u2029", "bad \xff utf8 \xe2\x82", "emoji 🐉"}

func TestAckFrameIsMarshal(t *testing.T) {
	for _, id := range jsonStrings {
		for _, status := range []string{"accepted", "queued"} {
			want := mustFrame(map[string]any{"type": "ack", "id": id, "status": status})
			if got := ackFrame(id, status); !bytes.Equal(got, want) {
				t.Errorf("ackFrame(%q, %q) = %s, want %s", id, status, got, want)
			}
		}
	}
}

func TestMarshalDataIsMarshal(t *testing.T) {
	maps := []map[string]any{
		{},
		{"player_id": "p1", "name": "Ann", "text": "hello"},
		{"code": "x", "message": "y"},
		{"b": "2", "a": "1", "c": "3", "aa": "4", "A": "5", "é": "6", "<": "7", "\u2028": "8"},
		{"too": "many", "k1": "", "k2": "", "k3": "", "k4": "", "k5": "", "k6": "", "k7": "", "k8": ""},
		{"player_id": "p1", "seat": 2},                     // not all strings
		{"hints": []string{"look"}, "text": "t", "x": nil}, // nor here
	}
	for i, s := range jsonStrings {
		maps = append(maps, map[string]any{s: s, "text": s, "k" + string(rune('a'+i)): "v"})
	}
	for _, m := range maps {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalData(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("marshalData(%v) = %s, %v; want %s", m, got, err, want)
		}
	}
}

// readInFrame reads every frame as json.Unmarshal does: the simple ones
// itself, the rest through it.
func TestReadInFrameIsUnmarshal(t *testing.T) {
	frames := []string{
		`{"type":"say","id":"fo1","text":"hello"}`,
		` { "text" : "x" , "id":"i", "type" : "act" } `,
		"{\n\t\"type\":\"ping\",\r\n\"id\":\"p\"}",
		`{}`, `{"type":"say","type":"act"}`, `{"id":""}`,
		`{"Type":"say","ID":"x","TEXT":"t"}`, `{"type":"say","extra":1,"id":"a"}`,
		`{"type":"say","id":"a","text":"esc \"q\" \u00e9 \n"}`, `{"type":"say","id":7}`,
		`{"type":null,"id":"a"}`, `{"type":"say"} x`, `{"type":"say",}`, `{"type":"say"`,
		`{"type":"say" "id":"a"}`, `{"type":"say","id":"a"}{}`, `[]`, `"say"`, ``, `   `,
		`{"type":"say","id":"a","text":"ünïcödé 🐉 <&>"}`, "{\"text\":\"tab\there\"}",
		`{"id":"a","id":"b"}`, `{"type":"sa`, `{"type"`, `{"type":`, `{ `, `{"":"x"}`,
	}
	for _, s := range frames[:3] { // what clients send: no detour through encoding/json
		if _, ok := parseInFrame([]byte(s)); !ok {
			t.Errorf("parseInFrame(%q) left it to encoding/json", s)
		}
	}
	for _, s := range frames {
		if !utf8.ValidString(s) {
			t.Fatalf("%q is not valid UTF-8", s)
		}
		var want inFrame
		wantOK := json.Unmarshal([]byte(s), &want) == nil
		got, ok := readInFrame([]byte(s))
		if ok != wantOK || (ok && got != want) {
			t.Errorf("readInFrame(%q) = %+v, %v; want %+v, %v", s, got, ok, want, wantOK)
		}
	}
}
