package hub

import (
	"bytes"
	"testing"
	"time"

	"tavern/internal/engine"
)

// Frames once encoded from maps keep their bytes (the maps' sorted keys).
var jsonStrings = []string{"", "a1", "fo17", `say "hi"\`, "<b>&</b>", "tab\tnew\nline\r\b\f\x00\x1f\x7f",
	"é – ü", "\u2028\u2029", "bad \xff utf8 \xe2\x82", "emoji 🐉"}

func TestFramesKeepTheMapsBytes(t *testing.T) {
	for _, id := range jsonStrings {
		for _, status := range []string{"accepted", "queued"} {
			want := mustFrame(map[string]any{"type": "ack", "id": id, "status": status})
			if got := ackFrame(id, status); !bytes.Equal(got, want) {
				t.Errorf("ackFrame(%q, %q) = %s, want %s", id, status, got, want)
			}
		}
		if got, want := pongFrame(id), mustFrame(map[string]any{"type": "pong", "id": id}); !bytes.Equal(got, want) {
			t.Errorf("pongFrame(%q) = %s, want %s", id, got, want)
		}
		want := map[string]any{"type": "error", "code": "bad_request", "message": id}
		if id != "" {
			want["id"] = id
		}
		if got := errorFrame(id, "bad_request", id); !bytes.Equal(got, mustFrame(want)) {
			t.Errorf("errorFrame(%q) = %s, want %s", id, got, mustFrame(want))
		}
	}
}

// TestEventFrameOf: a frame built around data already encoded is the one
// encoding/json makes of the whole event, whatever the kind, turn, time
// and data hold.
func TestEventFrameOf(t *testing.T) {
	ts := time.Date(2026, 11, 23, 8, 30, 1, 0, time.UTC)
	for _, e := range []engine.Event{
		{Seq: 1, TS: ts, Kind: "narration", Turn: "t3", Data: engine.NarrationData{Agent: "narrative", Text: "Rain <falls> & \"drips\"", Hints: []string{"2.5"}}},
		{Seq: 1 << 40, TS: ts.Add(123456789), Kind: "chat", Data: engine.RawData("{}")},
		{Seq: 7, TS: ts.Add(time.Millisecond), Kind: "odd\"kind<>", Turn: "t\u2028é\\", Data: engine.RawData(`{"nested":{"a":[1,"b",null]}}`)},
		{Seq: 8, TS: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), Kind: "dice", Data: nil},
	} {
		want := mustFrame(struct {
			Type string `json:"type"`
			engine.Event
		}{"event", e})
		if got := eventFrame(e); string(got) != string(want) {
			t.Errorf("event frame\n got %s\nwant %s", got, want)
		}
	}
}
