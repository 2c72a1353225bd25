package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// welcomed reads c's first frame: the table has let the socket in.
func welcomed(t *testing.T, c *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.Read(ctx); err != nil {
		t.Fatal(err)
	}
}

// A replaced invite code stops working at once, for the sockets it let in
// too, and a table made private closes the sockets of the strangers who
// watched it: 4003 with a reason the page shows. The owner's and the
// seated player's sockets stay open.
func TestSocketsCloseWhenTheTableIsNoLongerOpen(t *testing.T) {
	w := newBadWorld(t)
	e := w.e
	const reason = "this table is no longer open to you"

	guest, st := e.wsDial("/ws/tables/"+w.priv+"?role=spectator&invite="+w.invite, w.stranger)
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("dial with the invite: %d", st)
	}
	anon, st := e.wsDial("/ws/tables/"+w.priv+"?role=spectator&invite="+w.invite, "")
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("anonymous dial with the invite: %d", st)
	}
	member := e.ws(w.priv, "player", w.member)
	welcomed(t, guest)
	welcomed(t, anon)
	if r := e.do("POST", "/api/tables/"+w.priv+"/invite", nil, w.owner); r.status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	for name, c := range map[string]*websocket.Conn{"guest": guest, "anonymous": anon} {
		if code, got := closeOf(t, c); code != 4003 || got != reason {
			t.Errorf("%s's socket after the rotation: %d %q, want 4003 %q", name, code, got, reason)
		}
	}
	member.send(map[string]string{"type": "ping", "id": "still"})
	member.until("pong", func(f wsFrame) bool { return f.Type == "pong" && f.ID == "still" })

	watcher, st := e.wsDial("/ws/tables/"+w.pub+"?role=spectator", w.stranger)
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("dial the public table: %d", st)
	}
	welcomed(t, watcher)
	owner := e.ws(w.pub, "spectator", w.owner)
	player := e.ws(w.pub, "player", w.other)
	ping := func(c *wsConn, id string) {
		t.Helper()
		c.send(map[string]string{"type": "ping", "id": id})
		c.until("pong "+id, func(f wsFrame) bool { return f.Type == "pong" && f.ID == id })
	}
	if r := e.do("PATCH", "/api/tables/"+w.pub, map[string]any{"private": true}, w.owner); r.status != http.StatusOK {
		t.Fatalf("make private: %d %s", r.status, r.body)
	}
	if code, got := closeOf(t, watcher); code != 4003 || got != reason {
		t.Errorf("the stranger's socket after the table went private: %d %q, want 4003 %q", code, got, reason)
	}
	ping(owner, "owner")
	ping(player, "player")
}

// A stream (SSE) read with an invite code ends once the code is replaced:
// the next event is not written to it.
func TestStreamEndsWhenTheTableIsNoLongerOpen(t *testing.T) {
	w := newBadWorld(t)
	e := w.e
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/tables/"+w.priv+"/stream?invite="+w.invite, nil)
	req.Header.Set("Authorization", "Bearer "+w.stranger)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stream with the invite: %d", res.StatusCode)
	}
	first := make([]byte, 64)
	if _, err := res.Body.Read(first); err != nil { // "retry: 2000"
		t.Fatal(err)
	}
	if r := e.do("POST", "/api/tables/"+w.priv+"/invite", nil, w.owner); r.status != http.StatusCreated {
		t.Fatalf("rotate: %d %s", r.status, r.body)
	}
	if r := e.do("POST", "/api/tables/"+w.priv+"/notes", map[string]any{"text": "Only for us now."}, w.owner); r.status != http.StatusCreated {
		t.Fatalf("note: %d %s", r.status, r.body)
	}
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("the stream did not end after the rotation: %v (read %s)", err, rest)
	}
	if strings.Contains(string(rest), "Only for us now.") {
		t.Errorf("the stream went on after the rotation: %s", rest)
	}
}
