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

	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
)

// TestFullStoreUnderPlay fills the store under a table in play (a cap on
// the file's pages fails writes with SQLITE_FULL, as a full disk does, at
// the store's boundary) and frees it again, over real sockets: acts are
// answered `unavailable` and never acked unsaved, the hub says why it is
// not ready, the table does not restart (no 1012), a player who connects
// meanwhile is told the truth, and once the disk has room play goes on by
// itself with every acked act kept.
func TestFullStoreUnderPlay(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 7)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ana")
	e.sit(id, p, "Ana", "warrior")
	c := e.dial(id, "player", tok, -1)

	pages, err := e.store.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetMaxPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	// Play until the store cannot write. An act whose commit the store
	// holds is answered only once it is durable: none may be acked now.
	acked := map[string]bool{}
	answered := map[string]bool{}
	codes := map[string]string{}
	sent, narrations := 0, 0
	read := func(f frame) {
		switch {
		case f.Type == "event" && f.Kind == "narration":
			narrations++
		case f.Type == "ack":
			acked[f.ID], answered[f.ID] = true, true
		case f.Type == "error" && f.ID != "":
			switch f.Code {
			case hub.CodeUnavailable, hub.CodeBusy: // one waits already
			case hub.CodeRateLimited: // acts sent faster than a person types, on a slow machine
				time.Sleep(200 * time.Millisecond)
			default:
				t.Fatalf("act %s answered %s %q, want unavailable (or busy, or rate_limited)", f.ID, f.Code, f.Message)
			}
			answered[f.ID], codes[f.ID] = true, f.Code
		}
	}
	actNow := func(id, text string) {
		c.send(map[string]string{"type": "act", "id": id, "text": text})
		for !answered[id] {
			read(c.next())
		}
	}
	for e.hub.Health() == nil {
		if sent == len(answered) {
			if sent == 300 {
				t.Fatal("300 acts did not fill the store")
			}
			sent++
			c.send(map[string]string{"type": "act", "id": fmt.Sprintf("a%d", sent), "text": "I look around the square, slowly and carefully"})
		}
		select {
		case f, ok := <-c.frames:
			if !ok {
				t.Fatalf("socket closed: %v", <-c.closed)
			}
			read(f)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := e.hub.Health(); !strings.Contains(err.Error(), "full") {
		t.Errorf("Health() = %v, want the full disk named", err)
	}
	ackedBefore := len(acked)

	// A new act is refused at once, with the truth.
	c.send(map[string]string{"type": "act", "id": "refused", "text": "I wait"})
	f := c.until("the answer to the act on a full store", func(f frame) bool { return f.ID == "refused" })
	if f.Type != "error" || f.Code != hub.CodeUnavailable || !strings.Contains(f.Message, "cannot save") {
		t.Fatalf("an act while the store is full = %s %s %q, want error unavailable", f.Type, f.Code, f.Message)
	}
	for _, f := range c.backlog {
		read(f)
	}
	c.backlog = nil
	// A player who connects meanwhile: welcomed, or told the store cannot
	// save; never "no seat" or "shutting down".
	u := strings.Replace(e.srv.URL, "http", "ws", 1) + "/ws/tables/" + id + "?role=player&token=" + tok
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, res, err := websocket.Dial(dctx, u, &websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	cancel()
	if err != nil {
		if res == nil {
			t.Fatalf("dial while the store is full: %v", err)
		}
		body, _ := io.ReadAll(res.Body)
		var eb struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(body, &eb)
		if res.StatusCode != http.StatusServiceUnavailable || eb.Error.Code != hub.CodeUnavailable {
			t.Fatalf("dial while the store is full = %d %s, want 503 unavailable", res.StatusCode, body)
		}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, data, err := conn.Read(rctx)
		cancel()
		if err != nil {
			t.Fatalf("read the welcome while the store is full: %v", err)
		}
		var first frame
		_ = json.Unmarshal(data, &first)
		if first.Type == "error" && first.Code != hub.CodeUnavailable {
			t.Fatalf("join while the store is full = %s", data)
		}
		conn.Close(websocket.StatusNormalClosure, "")
	}

	// Room again: the held commits land, the hub is ready, play goes on.
	if err := e.store.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if e.hub.Health() == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := e.hub.Health(); err != nil {
		t.Fatalf("Health() 10 s after the disk has room = %v", err)
	}
	for sent > len(answered) {
		read(c.next())
	}
	// The DM plays on: an act is taken (once the one before it, if it
	// waits, is played) and answered.
	for try := 0; !acked["after"]; try++ {
		if try > 0 {
			if codes["after"] != hub.CodeBusy || try == 10 {
				t.Fatalf("an act once the disk has room = %s", codes["after"])
			}
			for n := narrations; narrations == n; {
				read(c.next())
			}
			delete(answered, "after")
		}
		actNow("after", "I look around")
	}
	for n := narrations; narrations == n; {
		read(c.next())
	}
	t.Logf("acts acked before the store filled: %d; sent: %d; acked in all: %d", ackedBefore, sent, len(acked))

	// Every acked act is in the file, after a restart.
	e.shutdown()
	d, err := db.Open(ctx, e.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for clientID := range acked {
		if _, ok, err := d.ActionByClientID(ctx, id, p.ID, clientID); err != nil || !ok {
			t.Errorf("acked act %s not in the store (%v)", clientID, err)
		}
	}
	if c.closedWith(websocket.StatusServiceRestart) {
		t.Error("the table restarted (1012) over a full store")
	}
}

// closedWith reports whether the socket was closed with code.
func (c *wsClient) closedWith(code websocket.StatusCode) bool {
	select {
	case err := <-c.closed:
		c.closed <- err
		return websocket.CloseStatus(err) == code
	default:
		return false
	}
}

// TestUnsavedTurnTellsTheTable: a turn played while the store cannot
// write is not saved; its streamed text is withdrawn, and the state says
// why nothing moves (cannot_save) — the event that would say so could not
// be saved either. Once the store writes, the turn is played again, its
// narration lands, and the notice goes.
func TestUnsavedTurnTellsTheTable(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, 11)
	id := e.table(hub.TableSpec{})
	p, tok := e.player("Ana")
	e.sit(id, p, "Ana", "warrior") // arrives with the offline narrator, before the gate
	gate := &gatedModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	e.shutdown()
	e.model = gate
	e.open()
	c := e.dialPush(id, "player", tok, -1)
	until := func(what string, ok func(f frame) bool) {
		t.Helper()
		for range 10000 {
			if ok(c.next()) {
				return
			}
		}
		t.Fatalf("no %s", what)
	}
	until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(`{"type":"act","id":"a1","text":"I look around"}`)); err != nil {
		t.Fatal(err)
	}
	until("the act's ack", func(f frame) bool { return f.Type == "ack" && f.ID == "a1" })
	<-gate.started

	// Fill the store while the turn's model call waits.
	pages, err := e.store.PageCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetMaxPages(ctx, pages); err != nil {
		t.Fatal(err)
	}
	for i := 0; e.hub.Health() == nil; i++ {
		if i == 5000 {
			t.Fatal("5000 players did not fill the store")
		}
		_ = e.store.CreatePlayer(ctx, engine.Player{ID: fmt.Sprintf("p-fill-%d", i), Name: strings.Repeat("x", 60)}, []byte(fmt.Sprintf("fill-%d", i)))
	}
	close(gate.release)

	withdrawn := false
	var actionSeq int64
	until("a state that says the server cannot save", func(f frame) bool {
		withdrawn = withdrawn || f.Type == "narration_withdrawn"
		if f.Type == "event" && f.Kind == "action" {
			actionSeq = f.Seq
		}
		return f.Type == "state" && strings.Contains(f.CannotSave, "cannot save")
	})
	if !withdrawn {
		t.Error("the unsaved turn's streamed narration was not withdrawn")
	}

	if err := e.store.SetMaxPages(ctx, 0); err != nil {
		t.Fatal(err)
	}
	until("the turn's narration, played again", func(f frame) bool {
		return f.Type == "event" && f.Kind == "narration" && f.Seq > actionSeq
	})
	until("a state without the notice", func(f frame) bool { return f.Type == "state" && f.CannotSave == "" })
}
