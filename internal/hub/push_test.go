package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// pushClient dials with ?batch=1&state=1 and reads messages: a frame or
// a JSON array of frames.
type pushClient struct {
	t      *testing.T
	conn   *websocket.Conn
	queue  []frame
	arrays int // messages that held an array
}

func (e *env) dialPush(tableID, role, token string, since int64) *pushClient {
	e.t.Helper()
	u := strings.Replace(e.srv.URL, "http", "ws", 1) + "/ws/tables/" + tableID + "?batch=1&state=1&role=" + role
	if token != "" {
		u += "&token=" + token
	}
	if since >= 0 {
		u += fmt.Sprintf("&since=%d", since)
	}
	conn, _, err := websocket.Dial(context.Background(), u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		e.t.Fatalf("dial %s: %v", u, err)
	}
	conn.SetReadLimit(1 << 20)
	e.t.Cleanup(func() { conn.CloseNow() })
	return &pushClient{t: e.t, conn: conn}
}

func (c *pushClient) next() frame {
	c.t.Helper()
	for len(c.queue) == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, data, err := c.conn.Read(ctx)
		cancel()
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		var raws []json.RawMessage
		if data[0] == '[' {
			c.arrays++
			if err := json.Unmarshal(data, &raws); err != nil || len(raws) < 2 {
				c.t.Fatalf("batch %s: %v (a batch holds two frames or more)", data, err)
			}
		} else {
			raws = []json.RawMessage{data}
		}
		for _, r := range raws {
			var f frame
			if err := json.Unmarshal(r, &f); err != nil {
				c.t.Fatalf("frame %s: %v", r, err)
			}
			f.Raw = r
			c.queue = append(c.queue, f)
		}
	}
	f := c.queue[0]
	c.queue = c.queue[1:]
	return f
}

// A client that opts into batches and state frames resumes a 600-event
// table from seq 150 (a replay far longer than the socket's queue) with
// every event in order, batched, then a state frame at the last seq; an
// act's events are followed by a state frame showing the change, chat
// brings none. A plain client on the same table gets only single frames.
func TestBatchedFramesAndStatePush(t *testing.T) {
	e := newEnv(t, 1)
	const n = 600
	id := e.longTable(n)

	plain := e.dial(id, "spectator", "", n)
	c := e.dialPush(id, "spectator", "", 150)
	if w := c.next(); w.Type != "welcome" || w.Seq != n {
		t.Fatalf("first frame %s, want welcome at seq %d", w.Raw, n)
	}
	for want := int64(151); want <= n; want++ {
		if f := c.next(); f.Type != "event" || f.Seq != want {
			t.Fatalf("frame %s, want event %d", f.Raw, want)
		}
	}
	if f := c.next(); f.Type != "state" || f.Seq != n {
		t.Fatalf("frame %s, want the state at %d", f.Raw, n)
	}
	if c.arrays == 0 {
		t.Error("the replay came without a single batch")
	}

	p, tok := e.player("Ann")
	e.sit(id, p, "Ann", "")
	pc := e.dial(id, "player", tok, -1)
	pc.next() // welcome
	pc.next() // snapshot
	// The seat's events, then a state frame whose party has Ann (the
	// state frames before it count the spectators as they came).
	var state frame
	for state.Type != "state" || state.Seq <= n {
		state = c.next()
	}
	var snap hub.Snapshot
	if err := json.Unmarshal(state.Raw, &snap); err != nil || len(snap.Party) != 1 || len(snap.Recent) != 0 {
		t.Fatalf("state %s: %v, want Ann in the party and no recent events", state.Raw, err)
	}
	if snap.Seq < n+1 {
		t.Fatalf("state at %d, before the seat's event", snap.Seq)
	}
	// Chat, then an act: the first state frame after the chat shows the act.
	pc.send(map[string]string{"type": "say", "id": "s1", "text": "hello"})
	pc.until("ack s1", func(f frame) bool { return f.Type == "ack" && f.ID == "s1" })
	if f := pc.act("a1", "I look around."); f.Type != "ack" {
		t.Fatalf("act: %s", f.Raw)
	}
	var chat, action int64
	for {
		f := c.next()
		if f.Type == "event" && f.Kind == string(engine.EventChat) {
			chat = f.Seq
		}
		if f.Type == "event" && f.Kind == "action" {
			action = f.Seq
		}
		if f.Type == "state" && chat > 0 {
			if action == 0 || f.Seq < action {
				t.Fatalf("state %d after chat %d before the action: chat pushed a state", f.Seq, chat)
			}
			break
		}
	}
	// The plain client saw no batch and no state frame.
	for range 5 {
		if f := plain.next(); f.Type == "state" || len(f.Raw) > 0 && f.Raw[0] == '[' {
			t.Fatalf("a client that did not opt in got %s", f.Raw)
		}
	}
}
