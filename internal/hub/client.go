package hub

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"tavern/internal/engine"
)

const (
	// Subprotocol is the websocket subprotocol of PROTOCOL.md v1.
	Subprotocol  = "tavern.v1"
	readLimit    = 16 << 10
	outQueue     = 1024
	writeTimeout = 5 * time.Second
	// Per-connection rate limit: a steady 10 frames/s with bursts of 30;
	// past 60 refusals in a row the connection is closed with 1008.
	frameRate   = 10
	frameBurst  = 30
	maxRefusals = 60
	// Limits of a frame's fields, in characters: its id, an action's text
	// and a chat line's.
	maxFrameIDLen = 64
	maxActLen     = 2000
	maxSayLen     = 500
)

type role int

const (
	roleSpectator role = iota
	rolePlayer
)

func roleLabel(r role) string {
	if r == rolePlayer {
		return "player"
	}
	return "spectator"
}

// client is one websocket connection. out is written only by the writer
// goroutine; send never blocks (a client that cannot keep up is closed).
type client struct {
	conn   *websocket.Conn
	out    chan []byte
	role   role
	player *engine.Player
	seat   string
	once   sync.Once
	done   chan struct{} // closed when the connection starts closing
	// Set once, before done is closed: how the writer closes the socket.
	closeCode   websocket.StatusCode
	closeReason string
	flush       bool
}

func (c *client) send(frame []byte) {
	select {
	case <-c.done:
	case c.out <- frame:
	default:
		c.closeWith(websocket.StatusPolicyViolation, "too slow", false)
	}
}

// close asks the writer to flush the queued frames and close the socket
// with code and reason. It never blocks; only the first call counts.
func (c *client) close(code websocket.StatusCode, reason string) { c.closeWith(code, reason, true) }

func (c *client) closeWith(code websocket.StatusCode, reason string, flush bool) {
	c.once.Do(func() {
		c.closeCode, c.closeReason, c.flush = code, reason, flush
		close(c.done)
	})
}

func mustFrame(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func eventFrame(e engine.Event) []byte {
	return mustFrame(struct {
		Type string `json:"type"`
		engine.Event
	}{"event", e})
}

func snapshotFrame(s Snapshot) []byte {
	return mustFrame(struct {
		Type string `json:"type"`
		Snapshot
	}{"snapshot", s})
}

func errorFrame(id, code, msg string) []byte {
	m := map[string]any{"type": "error", "code": code, "message": msg}
	if id != "" {
		m["id"] = id
	}
	return mustFrame(m)
}

func (h *Hub) serveWS(w http.ResponseWriter, r *http.Request, tableID string, p *engine.Player) {
	t, err := h.table(tableID)
	if err != nil {
		code, msg := ErrorCode(err)
		writeHTTPError(w, code, msg)
		return
	}
	q := r.URL.Query()
	rl := roleSpectator
	switch q.Get("role") {
	case "", "spectator":
	case "player":
		rl = rolePlayer
		if p == nil {
			writeHTTPError(w, CodeUnauthorized, "Players must authenticate (cookie, bearer token or ?token=).")
			return
		}
	default:
		writeHTTPError(w, CodeBadRequest, "role must be player or spectator.")
		return
	}
	since := int64(-1)
	if s := q.Get("since"); s != "" {
		since, err = strconv.ParseInt(s, 10, 64)
		if err != nil || since < 0 {
			writeHTTPError(w, CodeBadRequest, "since must be a non-negative event seq.")
			return
		}
	}
	if rl == rolePlayer {
		seated := make(chan bool, 1)
		if t.call(r.Context(), func() error { _, ok := t.seatOf(p.ID); seated <- ok; return nil }) != nil || !<-seated {
			writeHTTPError(w, CodeNotSeated, "You have no seat at this table; join as a spectator or take a seat.")
			return
		}
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		h.log.Debug("websocket accept", "err", err)
		return
	}
	conn.SetReadLimit(readLimit)
	c := &client{conn: conn, out: make(chan []byte, outQueue), role: rl, player: p, done: make(chan struct{})}
	// Reads are not tied to the hub's context: on shutdown the table closes
	// the socket with 1001, and the close handshake needs this reader.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := t.call(ctx, func() error { return t.join(ctx, c, since) }); err != nil {
		code, msg := ErrorCode(err)
		if code == CodeInternal {
			t.log.Error("join failed", "err", err)
		}
		_ = conn.Write(ctx, websocket.MessageText, errorFrame("", code, msg))
		conn.Close(websocket.StatusInternalError, "join failed")
		return
	}
	defer t.post(func() { t.part(c) })
	written := make(chan struct{})
	go func() {
		defer close(written)
		c.writeLoop()
	}()
	c.readLoop(ctx, t)
	c.close(websocket.StatusNormalClosure, "")
	<-written // the writer has closed the socket (handshake bounded by the library)
}

// writeLoop is the only writer and the only closer of the socket: when
// asked to close it first flushes the queued frames (unless the client was
// too slow to take them), then runs the close handshake.
func (c *client) writeLoop() {
	write := func(frame []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		return c.conn.Write(ctx, websocket.MessageText, frame)
	}
	for {
		select {
		case <-c.done:
			for c.flush {
				select {
				case frame := <-c.out:
					if write(frame) != nil {
						c.flush = false
					}
				default:
					c.flush = false
				}
			}
			_ = c.conn.Close(c.closeCode, c.closeReason)
			return
		case frame := <-c.out:
			if write(frame) != nil {
				c.closeWith(websocket.StatusPolicyViolation, "write failed", false)
			}
		}
	}
}

type inFrame struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

func (c *client) readLoop(ctx context.Context, t *table) {
	lim := rate.NewLimiter(frameRate, frameBurst)
	refusals := 0
	for {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			return // closed, or over the read limit (the library closes with 1009)
		}
		select {
		case <-c.done:
			// Closing: drain what the peer still sends until its close
			// frame arrives, so the close handshake completes instead of
			// the socket being reset with unread data.
			continue
		default:
		}
		var f inFrame
		parsed := typ == websocket.MessageText && json.Unmarshal(data, &f) == nil
		if !lim.Allow() {
			refusals++
			if refusals > maxRefusals {
				c.close(websocket.StatusPolicyViolation, "rate limit exceeded")
				continue
			}
			// Echo the id (when there is one) so the client can match it.
			c.send(errorFrame(idOf(f, parsed), CodeRateLimited, "Too many frames; slow down."))
			continue
		}
		refusals = 0
		if !parsed {
			c.send(errorFrame("", CodeBadRequest, "Frames are JSON text messages."))
			continue
		}
		if len(f.ID) > maxFrameIDLen {
			c.send(errorFrame("", CodeBadRequest, "id has at most "+strconv.Itoa(maxFrameIDLen)+" characters."))
			continue
		}
		switch f.Type {
		case "ping":
			c.send(mustFrame(map[string]any{"type": "pong", "id": f.ID}))
		case "act", "say":
			c.handle(ctx, t, f)
		default:
			c.send(errorFrame(f.ID, CodeBadRequest, "Unknown frame type; use act, say or ping."))
		}
	}
}

func idOf(f inFrame, parsed bool) string {
	if !parsed || len(f.ID) > maxFrameIDLen {
		return ""
	}
	return f.ID
}

func (c *client) handle(ctx context.Context, t *table, f inFrame) {
	maxLen := maxActLen
	if f.Type == "say" {
		maxLen = maxSayLen
	}
	switch n := utf8.RuneCountInString(f.Text); {
	case f.ID == "":
		c.send(errorFrame("", CodeBadRequest, f.Type+" needs an id."))
		return
	case c.role != rolePlayer:
		c.send(errorFrame(f.ID, CodeForbidden, "Spectators cannot "+f.Type+"; take a seat to play."))
		return
	case n == 0 || n > maxLen || !utf8.ValidString(f.Text):
		c.send(errorFrame(f.ID, CodeBadRequest, "text has 1 to "+strconv.Itoa(maxLen)+" characters."))
		return
	}
	err := t.call(ctx, func() error {
		var status string
		var err error
		if f.Type == "act" {
			status, err = t.act(ctx, c, f.ID, f.Text)
		} else {
			err = t.say(ctx, c, f.Text)
			status = "accepted"
		}
		if err != nil {
			return err
		}
		c.send(mustFrame(map[string]any{"type": "ack", "id": f.ID, "status": status}))
		return nil
	})
	if err != nil {
		code, msg := ErrorCode(err)
		if code == CodeInternal {
			t.log.Error("frame failed", "type", f.Type, "err", err)
		}
		c.send(errorFrame(f.ID, code, msg))
	}
}

// join registers c: welcome, then a replay of the events after since or a
// snapshot, all queued before any later event can be.
func (t *table) join(ctx context.Context, c *client, since int64) error {
	you := map[string]any{"role": roleLabel(c.role)}
	if c.player != nil {
		you["player_id"] = c.player.ID
		if s, ok := t.seatOf(c.player.ID); ok && c.role == rolePlayer {
			c.seat = s.Seat
			you["seat"] = s.Seat
			you["character_id"] = s.CharacterID
		}
	}
	c.send(mustFrame(map[string]any{"type": "welcome", "table": t.id, "you": you, "seq": t.seq}))
	replayed := false
	if since >= 0 && t.seq-since <= replayLimit {
		evs, err := t.h.cfg.Store.Events(ctx, t.id, since, replayLimit)
		if err != nil {
			return err
		}
		for _, e := range evs {
			c.send(eventFrame(e))
		}
		replayed = true
	}
	if !replayed {
		c.send(snapshotFrame(t.snapshot()))
	}
	t.clients[c] = struct{}{}
	t.updateSummary()
	t.connOpened(c)
	return nil
}

func (t *table) part(c *client) {
	if _, ok := t.clients[c]; ok {
		delete(t.clients, c)
		t.updateSummary()
		t.connClosed(c)
	}
}
