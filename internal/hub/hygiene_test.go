package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// Frames are checked before anything is stored: invalid UTF-8 and lone
// surrogates are refused (not replaced with U+FFFD), text against the
// engine's rule (control characters, noncharacters, bidi overrides,
// nothing visible) is refused, and nothing of a refused frame reaches the
// log. A fine line with emoji and accents is acked and stored as sent.
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
		{"lone surrogate in say", `{"type":"say","id":"s4","text":"hi \ud800"}`},
		{"lone surrogate in act", `{"type":"act","id":"a2","text":"I open \udc00 the door"}`},
		{"lone surrogate in the id", `{"type":"say","id":"\ud800","text":"hi"}`},
		{"zero-width only say", `{"type":"say","id":"s5","text":"\u200b\u200b"}`},
		{"override in act", `{"type":"act","id":"a3","text":"I attack \u202enilbog"}`},
		{"noncharacter in say", `{"type":"say","id":"s6","text":"hi \ufdd0"}`},
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
	// The same socket still takes good text, stored exactly as sent.
	const fine = "Zoë raises a 🍺 \U0001F37A to the café"
	c.send(map[string]string{"type": "say", "id": "ok", "text": fine})
	if f := c.until("answer", func(f frame) bool { return f.Type == "error" || f.Type == "ack" }); f.Type != "ack" {
		t.Fatalf("answer %s, want ack", f.Raw)
	}
	evs, err = e.hub.Events(context.Background(), id, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, ev := range evs {
		if ev.Kind == "chat" {
			stored++
			if d, ok := ev.Data.(engine.ChatData); !ok || d.Text != fine {
				t.Errorf("stored %+v, want the text %q as sent", ev.Data, fine)
			}
		}
	}
	if stored != 1 {
		t.Errorf("%d chat events stored, want 1", stored)
	}
}

// The frame budget is the player's, not the connection's: three sockets
// of one player together get one burst.
func TestRateLimitPerPlayer(t *testing.T) {
	e := newEnv(t, 1)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(id, p, "Ann", "")
	var cs []*wsClient
	for range 3 {
		c := e.dial(id, "player", tok, -1)
		c.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
		cs = append(cs, c)
	}
	const perSocket = 30 // one whole burst per socket
	for i := range perSocket {
		for j, c := range cs {
			c.send(map[string]string{"type": "say", "id": fmt.Sprintf("s%d-%d", j, i), "text": "hello"})
		}
	}
	acked, limited := 0, 0
	for _, c := range cs {
		for range perSocket {
			f := c.until("answer", func(f frame) bool { return f.Type == "ack" || f.Type == "error" })
			switch {
			case f.Type == "ack":
				acked++
			case f.Code == "rate_limited":
				limited++
			default:
				t.Errorf("answer %s", f.Raw)
			}
		}
	}
	// 90 frames against one burst of 30 (plus what refills meanwhile at
	// 10/s); per-connection budgets would have acked all 90.
	if acked >= 2*perSocket || limited == 0 {
		t.Errorf("acked %d, rate limited %d of %d frames: want the player's one budget to refuse most", acked, limited, 3*perSocket)
	}
}

// A request to the websocket route that is no websocket handshake is
// refused with the protocol's JSON error body and the library's status,
// not the library's plain text.
func TestHandshakeRefusalIsJSON(t *testing.T) {
	e := newEnv(t, 1)
	id := e.table(hub.TableSpec{})
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"plain GET", nil, http.StatusUpgradeRequired},
		{"wrong version", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "8", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", e.srv.URL+"/ws/tables/"+id+"?role=spectator", nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") ||
				json.Unmarshal(b, &body) != nil || body.Error.Code != "bad_request" || body.Error.Message == "" {
				t.Errorf("answer %d %q %s, want %d with the JSON error body, code bad_request", res.StatusCode, res.Header.Get("Content-Type"), b, tc.status)
			}
		})
	}
}
