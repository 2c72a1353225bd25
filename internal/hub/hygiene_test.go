package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/hub"
)

// Frames are checked before anything is stored: invalid UTF-8 is refused
// (not replaced with U+FFFD), control characters in act/say text are
// refused, and nothing of a refused frame reaches the log (issue 11 item 8).
func TestFrameHygiene(t *testing.T) {
	e := newEnv(t, 1)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(id, p, "Ann", "")
	c := e.dial(id, "player", tok, -1)
	c.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })

	for _, tc := range []struct{ name, raw string }{
		{"NUL in say", `{"type":"say","id":"s1","text":"hi\u0000there"}`},
		{"escape in act", `{"type":"act","id":"a1","text":"I look \u001b[31maround"}`},
		{"only spaces", `{"type":"say","id":"s2","text":"   "}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c.conn.Write(ctx, websocket.MessageText, []byte(tc.raw)); err != nil {
				t.Fatal(err)
			}
			f := c.until("answer", func(f frame) bool { return f.Type == "error" || f.Type == "ack" })
			if f.Type != "error" || f.Code != "bad_request" {
				t.Errorf("answer %s, want error bad_request", f.Raw)
			}
		})
	}
	t.Run("invalid UTF-8", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.conn.Write(ctx, websocket.MessageText, []byte("{\"type\":\"say\",\"id\":\"s3\",\"text\":\"caf\xe9\"}")); err != nil {
			t.Fatal(err)
		}
		f := c.until("answer", func(f frame) bool { return f.Type == "error" || f.Type == "ack" })
		if f.Type != "error" || f.Code != "bad_request" {
			t.Errorf("answer %s, want error bad_request", f.Raw)
		}
	})
	evs, err := e.hub.Events(context.Background(), id, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == "chat" || ev.Kind == "action" {
			t.Errorf("a refused frame was stored: %+v", ev)
		}
	}
}
