package main

import (
	"context"
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"tavern/internal/offline"
	"tavern/internal/openai/openaitest"
)

// setupTable creates a player and a table with the player seated and
// arrived (the DM has narrated the session start queued with the seat),
// and returns the table id and the player's token.
func setupTable(t testing.TB, c *child) (tableID, token string) {
	t.Helper()
	st, p := c.api("POST", "/api/players", "", map[string]any{"name": "Ann"})
	if st != http.StatusCreated {
		t.Fatalf("player: %d %v", st, p)
	}
	token = p["token"].(string)
	st, tb := c.api("POST", "/api/tables", token, map[string]any{"name": "Crash", "turn_timeout_s": 0})
	if st != http.StatusCreated {
		t.Fatalf("table: %d %v", st, tb)
	}
	tableID = tb["id"].(string)
	if st, m := c.api("POST", "/api/tables/"+tableID+"/seats", token, map[string]any{"character": map[string]any{"name": "Aldric"}}); st != http.StatusCreated {
		t.Fatalf("sit: %d %v", st, m)
	}
	// Asking for the session start answers 202 while it is queued, 409
	// once it has played.
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, m := c.api("POST", "/api/tables/"+tableID+"/session", token, nil)
		if st == http.StatusConflict {
			break
		}
		if st != http.StatusAccepted || time.Now().After(deadline) {
			t.Fatalf("session start: %d %v", st, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return tableID, token
}

// An action acknowledged before a kill -9 that struck between the ack and
// the commit of its turn (the model call was in flight) is resolved
// exactly once after the restart: one action event, one narration carrying
// its action_id.
func TestKillBetweenAckAndCommit(t *testing.T) {
	fake := openaitest.New(t, openaitest.FromModel(offline.Narrator{}))
	dbPath := filepath.Join(t.TempDir(), "crash.db")
	env := []string{"OPENAI_BASE_URL=" + fake.URL, "TAVERN_MODEL=fake"}
	c := startChild(t, dbPath, env...)
	tableID, token := setupTable(t, c)
	// The next model call (the act's, after the arrival's) hangs: the turn
	// is running, nothing committed.
	fake.Push(openaitest.Reply{Delay: time.Hour})
	before := len(fake.Requests())

	conn := c.dial(tableID, "player", token)
	readUntil(t, conn, func(m map[string]any) bool { return m["type"] == "snapshot" })
	const text = "I pry the rusted lid off the well."
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := wsjson.Write(ctx, conn, map[string]string{"type": "act", "id": "c1", "text": text}); err != nil {
		t.Fatal(err)
	}
	ack := readUntil(t, conn, func(m map[string]any) bool { return m["id"] == "c1" })
	if ack["type"] != "ack" {
		t.Fatalf("answer %v, want an ack", ack)
	}
	for len(fake.Requests()) == before { // the turn's model call has started
		select {
		case <-c.done:
			t.Fatalf("server exited:\n%s", c.logs)
		case <-time.After(10 * time.Millisecond):
		}
	}
	_ = c.signal(syscall.SIGKILL)
	conn.CloseNow()

	c2 := startChild(t, dbPath, env...)
	var actionID string
	var narrations int
	deadline := time.Now().Add(60 * time.Second)
	for {
		actions := 0
		narrations = 0
		for _, ev := range c2.events(tableID) {
			d, _ := ev["data"].(map[string]any)
			if ev["kind"] == "action" && d["text"] == text {
				actions++
				actionID, _ = d["action_id"].(string)
			}
		}
		for _, ev := range c2.events(tableID) {
			d, _ := ev["data"].(map[string]any)
			if ev["kind"] == "narration" && actionID != "" && d["action_id"] == actionID {
				narrations++
			}
		}
		if actions != 1 {
			t.Fatalf("%d action events for the acknowledged act, want 1", actions)
		}
		if narrations > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if narrations != 1 {
		t.Fatalf("the acknowledged action was resolved %d times after the restart, want once; logs:\n%s", narrations, c2.logs)
	}
	// Resolved: no longer pending, and a retry of the same frame is not
	// applied again.
	conn2 := c2.dial(tableID, "player", token)
	defer conn2.CloseNow()
	readUntil(t, conn2, func(m map[string]any) bool { return m["type"] == "snapshot" })
	if err := wsjson.Write(ctx, conn2, map[string]string{"type": "act", "id": "c1", "text": text}); err != nil {
		t.Fatal(err)
	}
	readUntil(t, conn2, func(m map[string]any) bool { return m["id"] == "c1" })
	actions := 0
	for _, ev := range c2.events(tableID) {
		if d, _ := ev["data"].(map[string]any); ev["kind"] == "action" && d["text"] == text {
			actions++
		}
	}
	if actions != 1 {
		t.Errorf("after a retry of the same act: %d action events, want 1", actions)
	}
}

// On SIGTERM every websocket is closed with 1001 before the process exits,
// and the process exits cleanly. Before Close waited for the handshakes,
// 11 sockets of 480 saw 1006 instead.
func TestSIGTERMClosesEverySocketWith1001(t *testing.T) {
	c := startChild(t, filepath.Join(t.TempDir(), "term.db"))
	tableID, token := setupTable(t, c)
	var conns []*websocket.Conn
	for i := range 12 {
		role, tok := "spectator", ""
		if i%3 == 0 {
			role, tok = "player", token
		}
		conn := c.dial(tableID, role, tok)
		readUntil(t, conn, func(m map[string]any) bool { return m["type"] == "snapshot" })
		conns = append(conns, conn)
	}
	codes := make(chan websocket.StatusCode, len(conns))
	for _, conn := range conns {
		go func() {
			for {
				if _, _, err := conn.Read(context.Background()); err != nil {
					codes <- websocket.CloseStatus(err)
					return
				}
			}
		}()
	}
	if err := c.signal(syscall.SIGTERM); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, c.logs)
	}
	for range conns {
		if code := <-codes; code != websocket.StatusGoingAway {
			t.Errorf("a socket saw %v, want 1001 going away", code)
		}
	}
}
