package hub

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
)

// wireTable serves the websocket of one fresh table at srv.URL.
func wireTable(t *testing.T) (*table, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	h, _ := testHub(t, func(c *Config) {
		c.Log = slog.New(slog.DiscardHandler)
		c.ShutdownGrace = time.Second
	})
	ts, err := h.CreateTable(ctx, engine.Player{ID: "p-o", Name: "Owner"}, TableSpec{Name: "Wire"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeWS(w, r, ts.ID, nil) }))
	t.Cleanup(srv.Close)
	tb, err := h.table(ts.ID)
	if err != nil {
		t.Fatal(err)
	}
	return tb, srv
}

// Messages the writer frames itself arrive whole and in order in each of
// the three length encodings (7-bit, 16-bit, 64-bit), all published in
// one table command so that they leave in one burst; and an idle socket
// still answers a ping (the library's pong goes through the wire).
func TestWireFramesAndPong(t *testing.T) {
	tb, srv := wireTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	// Ping needs a concurrent reader to see its pong.
	msgs := make(chan []byte, 16)
	go func() {
		defer close(msgs)
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			msgs <- data
		}
	}()
	readType := func() (string, []byte) {
		t.Helper()
		data, ok := <-msgs
		if !ok {
			t.Fatal("the socket closed")
		}
		var f struct{ Type string }
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%.200s: %v", data, err)
		}
		return f.Type, data
	}
	for typ := ""; typ != "snapshot"; typ, _ = readType() { // welcome, then the join's snapshot
	}
	// With the reader idle, a ping must come back (the pong is the
	// library's own frame, written through).
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("ping on an idle socket: %v", err)
	}
	sizes := []int{10, 8 << 10, 70 << 10}
	tb.post(func() {
		for _, n := range sizes {
			tb.publishNow(t, []engine.Event{engine.SystemEvent("test", strings.Repeat("x", n))})
		}
	})
	for i, n := range sizes {
		typ, data := readType()
		var e struct {
			Data struct{ Message string }
		}
		if err := json.Unmarshal(data, &e); typ != "event" || err != nil || len(e.Data.Message) != n {
			t.Errorf("message %d: %s with %d characters (%v), want an event with %d", i, typ, len(e.Data.Message), err, n)
		}
	}
	if err := conn.Ping(ctx); err != nil {
		t.Fatalf("ping after the burst: %v", err)
	}
}

// A frame the client sends in the same TCP segment as its upgrade request
// sits in net/http's reader at the hijack; it must reach the socket's own
// reader (golang/go#32314), so the ping is answered.
func TestWireKeepsEarlyFrames(t *testing.T) {
	_, srv := wireTable(t)
	nc, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: tavern.v1\r\n\r\n"
	if _, err := nc.Write(append([]byte(req), maskedText(`{"type":"ping","id":"early"}`)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %s", res.Status)
	}
	for {
		payload, err := readServerFrame(br)
		if err != nil {
			t.Fatalf("no pong for the early ping: %v", err)
		}
		var f struct{ Type, ID string }
		if json.Unmarshal(payload, &f) == nil && f.Type == "pong" {
			if f.ID != "early" {
				t.Errorf("pong id %q, want early", f.ID)
			}
			return
		}
	}
}

// maskedText is a client's text frame (RFC 6455 §5.2: masked) of a short
// payload.
func maskedText(s string) []byte {
	key := [4]byte{1, 2, 3, 4}
	b := append([]byte{0x81, 0x80 | byte(len(s))}, key[:]...)
	for i := range len(s) {
		b = append(b, s[i]^key[i%4])
	}
	return b
}

// readServerFrame reads one unmasked, final frame and returns its payload.
func readServerFrame(r *bufio.Reader) ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return p, err
}

// TestEventFrameOf: a frame built around data already encoded is the one
// encoding/json makes of the whole event, whatever the kind, turn, time
// and data hold.
func TestEventFrameOf(t *testing.T) {
	ts := time.Date(2026, 11, 23, 8, 30, 1, 0, time.UTC)
	for _, e := range []engine.Event{
		{Seq: 1, TS: ts, Kind: "narration", Turn: "t3", Data: map[string]any{"text": "Rain <falls> & \"drips\"", "n": 2.5}},
		{Seq: 1 << 40, TS: ts.Add(123456789), Kind: "chat", Data: map[string]any{}},
		{Seq: 7, TS: ts.Add(time.Millisecond), Kind: "odd\"kind<>", Turn: "t\u2028é\\", Data: map[string]any{"nested": map[string]any{"a": []any{1.0, "b", nil}}}},
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
