package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
)

// socketTable serves the websocket of one fresh table at srv.URL.
func socketTable(t *testing.T) (*table, *httptest.Server) {
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

// Messages arrive whole and in order in each of the three length
// encodings (7-bit, 16-bit, 64-bit), all published in one table command
// so that they leave in one burst; and an idle socket still answers a
// ping, before and after.
func TestSocketFramesAndPong(t *testing.T) {
	tb, srv := socketTable(t)
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
	// With the writer idle, a ping must come back.
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
func TestSocketKeepsEarlyFrames(t *testing.T) {
	_, srv := socketTable(t)
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

// batchServer serves one client whose writer starts only once frames
// are held and pushed, so that they wait together, as a settle's do.
func batchServer(t *testing.T, batch bool, frames [][]byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := &smallBuffers{ResponseWriter: w}
		conn, err := websocket.Accept(up, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		c := newClient(conn, nil, roleSpectator, nil)
		c.burst, c.batch = up.burst, batch
		c.registered()
		for _, f := range frames {
			c.hold(f)
		}
		c.push()
		go c.writeLoop()
		c.close(websocket.StatusNormalClosure, "done")
		<-c.closed
	}))
	t.Cleanup(srv.Close)
	return srv
}

// PROTOCOL.md "Batched frames": a client that asked for batches gets the
// frames queued together as one message holding their array, in order;
// every other client gets one frame per message. Both then see the close
// the writer runs after flushing.
func TestBatchedAndSingleFrames(t *testing.T) {
	frames := [][]byte{[]byte(`{"type":"event","seq":1}`), []byte(`{"type":"ack","id":"a"}`), []byte(`{"type":"event","seq":2}`)}
	for _, tc := range []struct {
		name  string
		batch bool
		want  []string
	}{
		{"batch", true, []string{`[{"type":"event","seq":1},{"type":"ack","id":"a"},{"type":"event","seq":2}]`}},
		{"single", false, []string{`{"type":"event","seq":1}`, `{"type":"ack","id":"a"}`, `{"type":"event","seq":2}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := batchServer(t, tc.batch, frames)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			var got []string
			for {
				typ, data, err := conn.Read(ctx)
				if err != nil {
					if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
						t.Errorf("read ended with %v, want the normal close", err)
					}
					break
				}
				if typ != websocket.MessageText {
					t.Errorf("message type %v, want text", typ)
				}
				got = append(got, string(data))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("messages\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// A batch stops at batchFrames frames: the rest follow in the next
// message, in order.
func TestBatchLen(t *testing.T) {
	one := []byte(`{}`)
	big := bytes.Repeat([]byte("x"), batchBytes)
	for _, tc := range []struct {
		name   string
		frames [][]byte
		want   int
	}{
		{"one", [][]byte{one}, 1},
		{"few", [][]byte{one, one, one}, 3},
		{"many", slices.Repeat([][]byte{one}, batchFrames+5), batchFrames},
		{"big first", [][]byte{big, one}, 1},
		{"big second", [][]byte{one, big, one}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := batchLen(tc.frames); got != tc.want {
				t.Errorf("batchLen = %d, want %d", got, tc.want)
			}
		})
	}
}
