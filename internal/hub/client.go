package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"tavern/internal/engine"
	"tavern/internal/store"
)

const (
	// Subprotocol is the websocket subprotocol of PROTOCOL.md v1.
	Subprotocol = "tavern.v1"
	readLimit   = 16 << 10
	// Rate limit per player, across its connections: a steady 10 frames/s
	// with bursts of 30; past 60 refusals in a row a connection is closed
	// with 1008. maxLimiters bounds the players remembered.
	frameRate   = 10
	frameBurst  = 30
	maxRefusals = 60
	maxLimiters = 10000
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

// client is one websocket connection: a reader goroutine (readLoop) and a
// writer goroutine (writeLoop, writer.go) that owns every write and the
// close. Queueing a frame never blocks the table: a client that cannot
// keep up is closed.
type client struct {
	conn   *websocket.Conn
	log    interface{ Warn(string, ...any) }
	role   role
	player *engine.Player
	seat   string
	// batch: the client opted into messages holding a JSON array of
	// frames (?batch=1); state: into state frames (?state=1).
	batch, state bool
	// viewer is who the socket was let in as (its player and the invite
	// code it came with): a table that stops being open to that viewer
	// closes it (owners.go closeUnseen). Set before the join.
	viewer Viewer
	// wake holds one pending signal for the writer: frames to write, or
	// a close.
	wake chan struct{}
	// timeout bounds each write (writeText); the writer's own.
	timeout *time.Timer
	// burst is the connection under conn, which sends the messages of one
	// wake in one write(2); nil where the socket was not hijacked by us.
	burst *burstConn

	mu sync.Mutex // guards the fields below
	// room is signalled when the writer takes the queue or the client
	// starts closing: reply waits on it for room.
	room sync.Cond
	// queue holds the frames waiting for the writer (at most outQueue),
	// from a pool while it is not empty.
	queue *frameList
	// joining is true until the table registers the client; until then
	// frames go to backlog, which the writer sends first and which has
	// no bound (the join's replay can be far longer than the queue).
	joining bool
	backlog [][]byte
	// Set once, by closeWith: how the writer closes the socket.
	closing     bool
	closeCode   websocket.StatusCode
	closeReason string
	flush       bool
	closed      chan struct{} // closed once the writer has closed the socket
	// pinger pings the peer every pingEvery (keepAlive, limits.go).
	pinger    *time.Timer
	pingEvery time.Duration
}

// newClient is a client of conn; its writer is go c.writeLoop().
func newClient(conn *websocket.Conn, log interface{ Warn(string, ...any) }, rl role, p *engine.Player) *client {
	c := &client{conn: conn, log: log, role: rl, player: p, joining: true,
		wake: make(chan struct{}, 1), closed: make(chan struct{})}
	c.room.L = &c.mu
	return c
}

func (c *client) playerID() string {
	if c.player == nil {
		return ""
	}
	return c.player.ID
}

// stateChanged asks for a state frame to the clients that opted in, sent
// once the command running now is done (so it shows the whole change:
// a turn's job started, its timer armed) and encoded once for all of
// them. Runs on the table goroutine.
func (t *table) stateChanged() {
	if t.statePending {
		return
	}
	wanted := false
	for c := range t.clients {
		if c.state {
			wanted = true
			break
		}
	}
	if !wanted {
		return
	}
	t.statePending = true
	select {
	case t.system <- t.pushState:
	default:
		t.pushState() // the inbox is full: now rather than late
	}
}

func (t *table) pushState() {
	t.statePending = false
	var frame []byte
	for c := range t.clients {
		if c.state {
			if frame == nil {
				frame = stateFrame(t.snapshot())
			}
			c.send(frame)
		}
	}
}

func (h *Hub) serveWS(w http.ResponseWriter, r *http.Request, tableID string, p *engine.Player) {
	t, err := h.table(tableID)
	if err != nil {
		code, msg := ErrorCode(err)
		writeHTTPError(w, code, msg)
		return
	}
	q := r.URL.Query()
	viewer := Viewer{Invite: q.Get("invite")}
	if p != nil {
		viewer.PlayerID = p.ID
	}
	if err := t.access.Load().sees(tableID, viewer); err != nil {
		code, msg := ErrorCode(err)
		writeHTTPError(w, code, msg)
		return
	}
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
		ctx, cancel := context.WithTimeout(r.Context(), h.joinTimeout())
		err := t.callShown(ctx, func() error { _, ok := t.seatOf(p.ID); seated <- ok; return nil })
		cancel()
		if err != nil {
			code, msg := ErrorCode(h.joinError(err))
			writeHTTPError(w, code, msg)
			return
		}
		if !<-seated {
			writeHTTPError(w, CodeNotSeated, "You have no seat at this table; join as a spectator or take a seat.")
			return
		}
	}
	addr, player := remoteAddr(r), ""
	if p != nil {
		player = p.ID
	}
	if !h.open.take(player, addr, h.cfg.SocketsPerPlayer, h.cfg.SocketsPerAddr) {
		writeHTTPError(w, CodeRateLimited, "Too many open sockets for this player or address; close one first.")
		return
	}
	release := func() { h.open.give(player, addr) }
	refusal := &acceptRefusal{ResponseWriter: w}
	up := &smallBuffers{ResponseWriter: refusal}
	conn, err := websocket.Accept(up, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		release()
		refusal.write()
		h.log.Debug("websocket accept", "err", err)
		return
	}
	conn.SetReadLimit(readLimit)
	if !h.trackSocket() {
		release()
		h.closeGoing(conn)
		return
	}
	c := newClient(conn, t.log, rl, p)
	c.burst = up.burst
	c.batch, c.state = q.Get("batch") == "1", q.Get("state") == "1"
	c.viewer = viewer
	// Reads are not tied to the hub's context: on shutdown the table closes
	// the socket with 1001, and the close handshake needs the reader.
	ctx := context.Background()
	joinCtx, cancel := context.WithTimeout(ctx, h.joinTimeout())
	err = h.join(joinCtx, t, c, since, viewer)
	cancel()
	if err != nil {
		defer h.untrackSocket()
		defer release()
		err = h.joinError(err)
		code, msg := ErrorCode(err)
		if code == CodeInternal {
			t.log.Error("join failed", "err", err)
		}
		_ = conn.Write(ctx, websocket.MessageText, errorFrame("", code, msg))
		switch {
		case err == errShuttingDown:
			h.closeGoing(conn)
			return
		case code == CodeUnavailable:
			conn.Close(websocket.StatusTryAgainLater, closeReason(msg))
			return
		}
		if reason := refusedReason(err); reason != "" { // owners.go
			conn.Close(CloseFreed, reason)
			return
		}
		conn.Close(websocket.StatusInternalError, "join failed")
		return
	}
	// The handler returns: a goroutine of its own reads, on a stack a
	// fraction of the handler's, and the request and net/http's buffers
	// are garbage.
	go c.writeLoop()
	c.keepAlive(h.cfg.PingInterval)
	go func() {
		defer h.untrackSocket()
		defer release()
		defer t.post(func() { t.part(c) })
		c.readLoop(ctx, t)
		c.close(websocket.StatusNormalClosure, "")
		<-c.closed // the writer has closed the socket (handshake bounded by closeTimeout)
		c.stopPings()
	}()
}

func (c *client) readLoop(ctx context.Context, t *table) {
	// A player's budget is shared by every connection of the player; a
	// spectator's (who can only ping) is its connection's.
	lim := rate.NewLimiter(frameRate, frameBurst)
	if c.player != nil {
		lim = t.h.frameLimiter(c.player.ID)
	}
	refusals := 0
	for {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			return // closed, or over the read limit (the library closes with 1009)
		}
		read := time.Now()
		if c.isClosing() {
			// Drain what the peer still sends until its close frame
			// arrives, so the close handshake completes instead of the
			// socket being reset with unread data.
			continue
		}
		var f inFrame
		// encoding/json would replace invalid UTF-8 and lone surrogates
		// with U+FFFD silently: text is refused, never stored altered.
		problem := "Frames are JSON text messages in valid UTF-8."
		parsed := typ == websocket.MessageText
		if parsed {
			if err := engine.CheckJSON(data); err != nil {
				parsed, problem = false, engine.ErrorMessage(err)
			}
		}
		if parsed {
			parsed = json.Unmarshal(data, &f) == nil
		}
		if !lim.Allow() {
			refusals++
			if refusals > maxRefusals {
				c.close(websocket.StatusPolicyViolation, "rate limit exceeded")
				continue
			}
			// Echo the id (when there is one) so the client can match it.
			c.reply(errorFrame(idOf(f, parsed), CodeRateLimited, "Too many frames; slow down."))
			continue
		}
		refusals = 0
		if !parsed {
			c.reply(errorFrame("", CodeBadRequest, problem))
			continue
		}
		if len(f.ID) > maxFrameIDLen {
			c.reply(errorFrame("", CodeBadRequest, "id has at most "+strconv.Itoa(maxFrameIDLen)+" characters."))
			continue
		}
		switch f.Type {
		case "ping":
			c.reply(pongFrame(f.ID))
		case "act", "say":
			c.handle(ctx, t, f, read)
		case "whisper":
			c.whisper(t, f) // whisper.go
		default:
			c.reply(errorFrame(f.ID, CodeBadRequest, "Unknown frame type; use act, say, whisper or ping."))
		}
	}
}

func idOf(f inFrame, parsed bool) string {
	if !parsed || len(f.ID) > maxFrameIDLen {
		return ""
	}
	return f.ID
}

// handle answers an act or say read at read.
func (c *client) handle(ctx context.Context, t *table, f inFrame, read time.Time) {
	maxLen := maxActLen
	if f.Type == "say" {
		maxLen = maxSayLen
	}
	switch {
	case f.ID == "":
		c.reply(errorFrame("", CodeBadRequest, f.Type+" needs an id."))
		return
	case c.role != rolePlayer:
		c.reply(errorFrame(f.ID, CodeForbidden, "Spectators cannot "+f.Type+"; take a seat to play."))
		return
	}
	// The engine's one rule for free text (engine.CleanText): bounded,
	// no control characters, noncharacters or bidi overrides, and
	// something visible.
	text, err := engine.CleanText("text", f.Text, maxLen)
	if err == nil && text == "" {
		err = engine.Errorf(engine.EINVALID, "text must not be empty.")
	}
	if err != nil {
		c.reply(errorFrame(f.ID, CodeBadRequest, engine.ErrorMessage(err)))
		return
	}
	f.Text = text
	// The answer comes on the table goroutine once the act or line is
	// durable (pipeline.go), queued there in order with the events. The
	// reader does not wait for it but goes back to reading. Waiting cost a
	// goroutine wake-up per frame: 2.5 % of the server's CPU in the
	// fan-out run. The inbox bounds what one reader can queue (post
	// blocks while it is full). The rate limit bounds what one player can
	// send.
	answer := func(status string, err error) {
		if err == nil {
			c.ack(t, f, status, read)
			return
		}
		var r refusal
		if errors.As(err, &r) {
			// Off the table goroutine, which never reads the disk: was it
			// this very act, sent before?
			if t.h.spawn(func() { c.answerRefused(ctx, t, f, r, read) }) {
				return
			}
		}
		c.answerError(t, f, err)
	}
	cmd := func() {
		if f.Type == "act" {
			t.act(ctx, c, f.ID, f.Text, answer)
		} else {
			t.say(ctx, c, f.Text, answer)
		}
	}
	if t.h.storeFault() != nil {
		// Answered here, not by the table: its goroutine may be waiting
		// for a commit the store retries (storage.go).
		c.answerError(t, f, store.ErrUnavailable)
		return
	}
	if !t.post(cmd) {
		err := errEvicted
		if t.h.ctx.Err() != nil {
			err = errShuttingDown
		}
		c.answerError(t, f, err)
	}
}

// answerRefused answers an act the table refused: as the act it repeats,
// if the player sent this one before, else with the refusal.
func (c *client) answerRefused(ctx context.Context, t *table, f inFrame, r refusal, read time.Time) {
	status, err := t.answerRetry(ctx, c.player.ID, f.ID, r.err)
	if err == nil {
		c.ack(t, f, status, read)
		return
	}
	c.answerError(t, f, err)
}

// ack acknowledges frame f, read at read, with status.
func (c *client) ack(t *table, f inFrame, status string, read time.Time) {
	c.send(ackFrame(f.ID, status))
	t.h.metrics.acked(f.Type, read)
}

// answerError answers frame f with err's code and message; it never
// blocks (a client too slow to take it is closed).
func (c *client) answerError(t *table, f inFrame, err error) {
	code, msg := ErrorCode(err)
	if code == CodeInternal {
		t.log.Error("frame failed", "type", f.Type, "err", err)
	}
	c.send(errorFrame(f.ID, code, msg))
}

// join registers c: welcome, then a replay of the events after since or a
// snapshot, all queued before any later event can be. The table goroutine
// never reads the disk for it. It hands out the seq boundary, and the
// replay up to it is read here. The table then adds what came after from
// its recent events (or, if more came, a snapshot).
func (h *Hub) join(ctx context.Context, t *table, c *client, since int64, v Viewer) error {
	var boundary int64
	replay := false
	if err := t.callShown(ctx, func() error {
		// Checked again here, where a kick or a ban cannot slip between
		// the check and the registration.
		if err := t.admit(c, v); err != nil {
			return err
		}
		replay = t.welcome(c, since)
		boundary = t.seq
		return nil
	}); err != nil || !replay {
		return err
	}
	evs, err := h.cfg.Store.Events(ctx, t.id, since, int(boundary-since))
	if err != nil {
		return fmt.Errorf("replay for a joining client: %w", err)
	}
	return t.callShown(ctx, func() error {
		a := t.access.Load()
		for _, e := range a.redactAll(evs) {
			c.send(eventFrame(e))
		}
		var gap []engine.Event
		for _, e := range t.recent {
			if e.Seq > boundary {
				gap = append(gap, e)
			}
		}
		if int64(len(gap)) == t.seq-boundary {
			for _, e := range a.redactAll(gap) {
				c.send(eventFrame(e))
			}
			if c.state { // the events may not tell all (a turn running)
				c.send(stateFrame(t.snapshot()))
			}
		} else {
			c.send(snapshotFrame(t.snapshot()))
		}
		t.register(c)
		return nil
	})
}

// welcome queues c's welcome and reports whether c resumes by a replay of
// the events after since; if not it queues a snapshot and registers c.
// Runs on the table goroutine.
func (t *table) welcome(c *client, since int64) (replay bool) {
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
	if since >= 0 && t.seq-since <= replayLimit {
		if since < t.seq {
			return true
		}
		if c.state { // up to date in events; the state may have moved
			c.send(stateFrame(t.snapshot()))
		}
	} else {
		c.send(snapshotFrame(t.snapshot()))
	}
	t.register(c)
	return false
}

func (t *table) register(c *client) {
	c.registered()
	t.clients[c] = struct{}{}
	t.updateSummary()
	t.connOpened(c)
	// The snapshot's online seats, or its spectator count: c's own
	// snapshot was built before c was counted, so it hears of itself here.
	t.stateChanged()
}

func (t *table) part(c *client) {
	if _, ok := t.clients[c]; ok {
		delete(t.clients, c)
		t.updateSummary()
		t.connClosed(c)
		t.stateChanged()
	}
}

// closeGoing closes a socket the hub will not serve because it closes:
// 1012 while the node drains (another node serves the table: reconnect
// now), 1001 otherwise, as table.shutdown says to the sockets it holds.
func (h *Hub) closeGoing(conn *websocket.Conn) {
	if h.draining.Load() {
		conn.Close(websocket.StatusServiceRestart, "this node is draining; reconnect")
		return
	}
	conn.Close(websocket.StatusGoingAway, "server shutting down")
}
