package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
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
	_, p, err := readFrame(r)
	return p, err
}

// readFrame reads one unmasked frame and returns its first byte (FIN and
// opcode) and its payload.
func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(l[:])
	}
	p := make([]byte, n)
	_, err := io.ReadFull(r, p)
	return h[0], p, err
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

// tcpPair is a loopback TCP connection whose server end has a small send
// buffer, so that a peer that does not read soon fills the buffers (the
// peer's receive buffer starts at 128 KiB).
func tcpPair(t *testing.T) (server, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	if err := server.(*net.TCPConn).SetWriteBuffer(4 << 10); err != nil {
		t.Fatal(err)
	}
	if err := peer.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return server, peer
}

// A control frame the library writes while a tryFlush left a message half
// written goes out after that message, not inside it (RFC 6455 §5.4).
func TestWireControlFrameAfterAPartialWrite(t *testing.T) {
	server, peer := tcpPair(t)
	w := newWire(server)
	msg := bytes.Repeat([]byte("x"), 1<<20)
	w.message([][]byte{msg})
	if all, err := w.tryFlush(); all || err != nil {
		t.Fatalf("tryFlush of 1 MiB to a peer that does not read: all %v, err %v; want part of it", all, err)
	}
	wrote := make(chan error, 1)
	go func() { _, err := w.Write([]byte{0x8a, 0}); wrote <- err }() // a pong, as the library writes it
	br := bufio.NewReader(peer)
	for i, want := range []struct {
		op  byte
		len int
	}{{0x81, len(msg)}, {0x8a, 0}} {
		op, p, err := readFrame(br)
		if err != nil || op != want.op || len(p) != want.len {
			t.Fatalf("frame %d: first byte %#x, %d bytes (%v); want %#x, %d bytes", i, op, len(p), err, want.op, want.len)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
}

// A push the socket cannot take whole (the peer is not reading) leaves
// the rest of its write to the writer: every message still arrives whole
// and in order.
func TestPushLeavesTheRestToTheWriter(t *testing.T) {
	server, peer := tcpPair(t)
	c := newClient(nil, newWire(server), nil, roleSpectator, nil)
	c.registered()
	const frames, size = 200, 2 << 10
	for i := range frames {
		c.send(fmt.Appendf(nil, "%05d%s", i, strings.Repeat("x", size-5)))
	}
	c.mu.Lock()
	handedOver := c.writing
	c.mu.Unlock()
	if !handedOver {
		t.Fatal("no writer runs after 400 KiB to a peer that does not read: every push was taken whole")
	}
	br := bufio.NewReader(peer)
	for i := range frames {
		op, p, err := readFrame(br)
		if err != nil {
			t.Fatalf("after %d messages: %v", i, err)
		}
		if want := fmt.Sprintf("%05d", i); op != 0x81 || len(p) != size || string(p[:5]) != want {
			t.Fatalf("message %d: first byte %#x, %d bytes starting %.5q; want 0x81, %d bytes starting %q", i, op, len(p), p, size, want)
		}
	}
}

// TestCloseDuringAFailedPushClosesTheSocket: a client asked to close while
// a push writes (its reader ended: the peer is gone) finds the push being
// the writer and leaves the socket to it; if that write fails, the push
// must still start the writer that runs the close handshake. It did not,
// so the reader waited forever for the socket to close and the hub's
// shutdown for the reader (seen after loadgen runs cut short).
func TestCloseDuringAFailedPushClosesTheSocket(t *testing.T) {
	accepted := make(chan *client, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sb := &smallBuffers{ResponseWriter: w}
		conn, err := websocket.Accept(sb, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		c := newClient(conn, sb.wire, nil, roleSpectator, nil)
		c.registered()
		accepted <- c
	}))
	defer srv.Close()
	peer, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.CloseNow()
	go func() { // answers the close handshake
		for {
			if _, _, err := peer.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	c := <-accepted

	c.mu.Lock()
	c.writing = true // a push writes, c.mu let go
	c.mu.Unlock()
	c.close(websocket.StatusNormalClosure, "") // the reader ended meanwhile
	c.mu.Lock()
	c.pushed(false, errors.New("write: broken pipe"))
	c.mu.Unlock()
	select {
	case <-c.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the socket was never closed: no writer ran the close")
	}
}
