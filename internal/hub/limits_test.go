package hub_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// limitEnv is a running Tavern whose hub config tune adjusts.
func limitEnv(t *testing.T, tune func(*hub.Config)) *env {
	t.Helper()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tavern.db"), players: map[string]*engine.Player{},
		model: offline.Narrator{}, seed: 1, tune: tune}
	e.serve()
	return e
}

// tryDial opens a socket of the table, or returns the HTTP status and
// body of its refusal.
func (e *env) tryDial(tableID, token string) (*websocket.Conn, int, []byte) {
	e.t.Helper()
	u := strings.Replace(e.srv.URL, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=spectator"
	if token != "" {
		u += "&token=" + token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err == nil {
		// Something must read for the library to answer the server's
		// pings; CloseRead would close the socket at the first frame.
		go func() {
			for {
				if _, _, err := conn.Read(context.Background()); err != nil {
					return
				}
			}
		}()
		e.t.Cleanup(func() { conn.CloseNow() })
		return conn, http.StatusSwitchingProtocols, nil
	}
	if res == nil {
		e.t.Fatalf("dial %s: %v", u, err)
	}
	body, _ := io.ReadAll(res.Body)
	return nil, res.StatusCode, body
}

// wantRefused checks a refusal: 429 with the JSON error body.
func wantRefused(t *testing.T, what string, status int, body []byte) {
	t.Helper()
	var b struct {
		Error struct{ Code, Message string }
	}
	if status != http.StatusTooManyRequests || json.Unmarshal(body, &b) != nil || b.Error.Code != hub.CodeRateLimited || b.Error.Message == "" {
		t.Errorf("%s: %d %s, want 429 with a rate_limited error body", what, status, body)
	}
}

// One socket over a limit is refused 429 before the upgrade, and a socket
// closed gives its place back.
func TestSocketLimits(t *testing.T) {
	t.Run("per player", func(t *testing.T) {
		e := limitEnv(t, nil) // the default: 32 a player
		tableID := e.table(hub.TableSpec{})
		_, tok := e.player("Ann")
		var conns []*websocket.Conn
		for i := range 32 {
			c, status, body := e.tryDial(tableID, tok)
			if c == nil {
				t.Fatalf("socket %d refused: %d %s", i+1, status, body)
			}
			conns = append(conns, c)
		}
		_, status, body := e.tryDial(tableID, tok)
		wantRefused(t, "the 33rd socket of one player", status, body)
		// Another player from the same address is not counted with Ann.
		_, bob := e.player("Bob")
		if c, status, body := e.tryDial(tableID, bob); c == nil {
			t.Errorf("another player's socket refused: %d %s", status, body)
		}
		conns[0].Close(websocket.StatusNormalClosure, "")
		waitDial(t, e, tableID, tok)
	})
	t.Run("per address", func(t *testing.T) {
		e := limitEnv(t, func(c *hub.Config) { c.SocketsPerAddr = 3 })
		tableID := e.table(hub.TableSpec{})
		_, tok := e.player("Ann")
		first, status, body := e.tryDial(tableID, "")
		if first == nil {
			t.Fatalf("socket refused: %d %s", status, body)
		}
		for i := range 2 {
			if c, status, body := e.tryDial(tableID, tok); c == nil { // a player counts at its address too
				t.Fatalf("socket %d refused: %d %s", i+2, status, body)
			}
		}
		_, status, body = e.tryDial(tableID, "")
		wantRefused(t, "a spectator's 4th socket from one address", status, body)
		_, status, body = e.tryDial(tableID, tok)
		wantRefused(t, "a player's 4th socket from one address", status, body)
		first.Close(websocket.StatusNormalClosure, "")
		waitDial(t, e, tableID, "")
	})
}

// waitDial dials until a socket is accepted: a closed socket's place is
// given back once the server has closed it. The bound only guards a hang.
func waitDial(t *testing.T, e *env, tableID, token string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, status, body := e.tryDial(tableID, token)
		if c != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a closed socket never gave its place back: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rawSocket upgrades a plain TCP connection to a socket of the table and
// returns it with its reader; the test speaks RFC 6455 itself, so it can
// stop answering or stop midway through a frame.
func rawSocket(t *testing.T, e *env, tableID string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	req := "GET /ws/tables/" + tableID + "?role=spectator HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: tavern.v1\r\n\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %s", res.Status)
	}
	return nc, br
}

// readUntilGone reads the server's frames until the server closes the
// connection, within bound (a hang guard, far above the bound under
// test). It returns the opcodes seen, the close code if a close frame
// came, and how long the connection lived.
func readUntilGone(t *testing.T, nc net.Conn, br *bufio.Reader, bound time.Duration) (ops map[byte]bool, closeCode int, lived time.Duration) {
	t.Helper()
	start := time.Now()
	if err := nc.SetReadDeadline(start.Add(bound)); err != nil {
		t.Fatal(err)
	}
	ops = map[byte]bool{}
	for {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server still holds the connection after %s", bound)
			}
			return ops, closeCode, time.Since(start)
		}
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var l [2]byte
			if _, err := io.ReadFull(br, l[:]); err != nil {
				return ops, closeCode, time.Since(start)
			}
			n = uint64(binary.BigEndian.Uint16(l[:]))
		case 127:
			var l [8]byte
			if _, err := io.ReadFull(br, l[:]); err != nil {
				return ops, closeCode, time.Since(start)
			}
			n = binary.BigEndian.Uint64(l[:])
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			return ops, closeCode, time.Since(start)
		}
		op := h[0] & 0x0f
		ops[op] = true
		if op == 0x8 && len(p) >= 2 {
			closeCode = int(binary.BigEndian.Uint16(p))
		}
	}
}

// A peer that reads but never answers a ping is closed within the ping
// interval (plus the close handshake's bound); without pings it would
// hold its socket for ever.
func TestSilentPeerIsReaped(t *testing.T) {
	const interval = time.Second
	e := limitEnv(t, func(c *hub.Config) { c.PingInterval = interval })
	tableID := e.table(hub.TableSpec{})
	nc, br := rawSocket(t, e, tableID)
	ops, code, lived := readUntilGone(t, nc, br, 60*time.Second)
	if !ops[0x9] {
		t.Errorf("no ping came before the close (opcodes %v)", ops)
	}
	if code != int(websocket.StatusPolicyViolation) {
		t.Errorf("close code %d, want 1008", code)
	}
	t.Logf("a peer silent to pings (interval %s) was dropped after %s", interval, lived)
}

// A peer that stops midway through an oversize frame gets 1009 and loses
// its connection: the server does not wait for the rest of the frame.
func TestOversizeFrameHalfSentIsDropped(t *testing.T) {
	e := limitEnv(t, nil)
	tableID := e.table(hub.TableSpec{})
	nc, br := rawSocket(t, e, tableID)
	// A masked text frame announcing 64 KiB, of which 20 KiB are sent:
	// past the 16 KiB read limit, far from the frame's end.
	const announced, sent = 64 << 10, 20 << 10
	hdr := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}
	binary.BigEndian.PutUint64(hdr[2:10], announced)
	if _, err := nc.Write(append(hdr, make([]byte, sent)...)); err != nil {
		t.Fatal(err)
	}
	// PROTOCOL.md: gone within 10 s; the guard is far above.
	ops, code, lived := readUntilGone(t, nc, br, 60*time.Second)
	if code != int(websocket.StatusMessageTooBig) {
		t.Errorf("close code %d (opcodes %v), want 1009", code, ops)
	}
	t.Logf("a half-sent oversize frame held its socket %s after the upgrade", lived)
}
