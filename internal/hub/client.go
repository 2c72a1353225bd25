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
	"unicode/utf8"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"tavern/internal/engine"
)

const (
	// Subprotocol is the websocket subprotocol of PROTOCOL.md v1.
	Subprotocol = "tavern.v1"
	readLimit   = 16 << 10
	// outQueue is a socket's queue of frames waiting for its writer: small
	// (24 KiB per socket at 1,024 was most of the live heap), a client
	// that falls this far behind is closed with 1008 "too slow". The join's
	// welcome, replay and snapshot go to the backlog instead, never dropped.
	outQueue = 64
	// A batched message (?batch=1) holds at most batchFrames frames and
	// stops growing past batchBytes.
	batchFrames  = 64
	batchBytes   = 64 << 10
	writeTimeout = 5 * time.Second
	// closeTimeout bounds a close handshake (the library's own bound is
	// 5 s to write the close frame plus 5 s for the answer); past it the
	// TCP connection is dropped. A client too slow to read its frames
	// would otherwise hold its socket for ~25 s and see 1006 (issue 11).
	closeTimeout = 2 * time.Second
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

// client is one websocket connection. out is written only by the writer
// goroutine; send never blocks (a client that cannot keep up is closed).
type client struct {
	conn   *websocket.Conn
	log    interface{ Warn(string, ...any) }
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
	// batch: the client opted into messages holding a JSON array of
	// frames (?batch=1); state: into state frames (?state=1).
	batch, state bool
	// joining is true until the table registers the client; until then
	// (table goroutine only) send appends to backlog, which the writer
	// sends first. The join's replay can be far longer than out.
	joining bool
	backlog [][]byte
}

// send queues frame; a client whose queue is full is closed with 1008.
func (c *client) send(frame []byte) {
	if c.joining {
		c.backlog = append(c.backlog, frame)
		return
	}
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

// reply queues a frame answering one of the client's own (pong, error),
// from its reader: it waits for room, so a client that floods without
// reading stops being read rather than overflowing the queue.
func (c *client) reply(frame []byte) {
	select {
	case <-c.done:
	case c.out <- frame:
	}
}

// sendDroppable queues frame unless the queue is full (narration deltas:
// not numbered, not replayed, so losing one never desynchronises).
func (c *client) sendDroppable(frame []byte) {
	if c.joining {
		return
	}
	select {
	case <-c.done:
	case c.out <- frame:
	default:
	}
}

func (c *client) playerID() string {
	if c.player == nil {
		return ""
	}
	return c.player.ID
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

// stateFrame is PROTOCOL.md's state frame: the snapshot's fields but
// recent (the client has those events as frames).
func stateFrame(s Snapshot) []byte {
	s.Recent = []engine.Event{}
	return mustFrame(struct {
		Type string `json:"type"`
		Snapshot
	}{"state", s})
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
	case t.inbox <- t.pushState:
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
	if !h.trackSocket() {
		conn.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	defer h.untrackSocket()
	c := &client{conn: conn, log: t.log, out: make(chan []byte, outQueue), role: rl, player: p, done: make(chan struct{}),
		batch: q.Get("batch") == "1", state: q.Get("state") == "1", joining: true}
	// Reads are not tied to the hub's context: on shutdown the table closes
	// the socket with 1001, and the close handshake needs this reader.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := h.join(ctx, t, c, since); err != nil {
		code, msg := ErrorCode(err)
		if code == CodeInternal {
			t.log.Error("join failed", "err", err)
		}
		_ = conn.Write(ctx, websocket.MessageText, errorFrame("", code, msg))
		if code == CodeUnavailable {
			conn.Close(websocket.StatusGoingAway, "server shutting down")
			return
		}
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

// writeLoop is the only writer and the only closer of the socket: it
// sends the join's backlog, then the queue; when asked to close it first
// flushes the queued frames (unless the client was too slow to take
// them), then runs the close handshake. A client that opted into batches
// gets whatever is queued behind a frame in the same message: one write
// (and one flush, one write(2)) for all of them.
func (c *client) writeLoop() {
	// A write stuck past writeTimeout drops the connection. One timer per
	// socket, reset per message: a context with a deadline per message
	// (and the library's AfterFunc on it) was an eighth of fan-out CPU.
	w := writer{c: c, stuck: time.AfterFunc(time.Hour, func() { _ = c.conn.CloseNow() })}
	w.stuck.Stop()
	defer w.stuck.Stop()
	backlog := c.backlog
	c.backlog = nil
	for len(backlog) > 0 {
		n := 1
		if c.batch {
			n = batchLen(backlog)
		}
		if w.write(backlog[:n]) != nil {
			c.closeWith(websocket.StatusPolicyViolation, "write failed", false)
			break
		}
		backlog = backlog[n:]
	}
	for {
		select {
		case <-c.done:
			if !c.flush && c.log != nil {
				c.log.Warn("closing websocket", "code", int(c.closeCode), "reason", c.closeReason, "player", c.playerID(), "queued", len(c.out))
			}
			for c.flush {
				select {
				case frame := <-c.out:
					if w.send(frame) != nil {
						c.flush = false
					}
				default:
					c.flush = false
				}
			}
			// The handshake gets closeTimeout; then the connection is
			// dropped (CloseNow unblocks Close).
			drop := time.AfterFunc(closeTimeout, func() { _ = c.conn.CloseNow() })
			_ = c.conn.Close(c.closeCode, c.closeReason)
			drop.Stop()
			return
		case frame := <-c.out:
			if w.send(frame) != nil {
				c.closeWith(websocket.StatusPolicyViolation, "write failed", false)
			}
		}
	}
}

// writer is a writeLoop's. A batch's frames and message come from a pool
// shared by every socket, so an idle socket holds no batch buffer.
type writer struct {
	c     *client
	stuck *time.Timer
}

type batch struct {
	frames [][]byte
	buf    []byte
}

var batches = sync.Pool{New: func() any { return new(batch) }}

// send writes first and, for a batching client, the frames queued behind
// it.
func (w writer) send(first []byte) error {
	if !w.c.batch || len(w.c.out) == 0 {
		return w.message(first)
	}
	bt := batches.Get().(*batch)
	bt.frames = append(bt.frames[:0], first)
	for size := len(first); len(bt.frames) < batchFrames && size < batchBytes; {
		var f []byte
		select {
		case f = <-w.c.out:
		default:
		}
		if f == nil {
			break
		}
		bt.frames = append(bt.frames, f)
		size += len(f) + 1
	}
	err := w.batch(bt, bt.frames)
	clear(bt.frames)
	batches.Put(bt)
	return err
}

// write sends frames as one message: the frame itself when there is one,
// else a JSON array of them.
func (w writer) write(frames [][]byte) error {
	if len(frames) == 1 {
		return w.message(frames[0])
	}
	bt := batches.Get().(*batch)
	err := w.batch(bt, frames)
	batches.Put(bt)
	return err
}

func (w writer) batch(bt *batch, frames [][]byte) error {
	if len(frames) == 1 {
		return w.message(frames[0])
	}
	b := append(bt.buf[:0], '[')
	for i, f := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	b = append(b, ']')
	if cap(b) <= 2*batchBytes { // a pooled buffer never grows past a bound
		bt.buf = b[:0]
	}
	return w.message(b)
}

func (w writer) message(msg []byte) error {
	w.stuck.Reset(writeTimeout)
	err := w.c.conn.Write(context.Background(), websocket.MessageText, msg)
	w.stuck.Stop()
	return err
}

// batchLen is how many of frames (at least one) go in one batch.
func batchLen(frames [][]byte) int {
	n, size := 1, len(frames[0])
	for n < len(frames) && n < batchFrames && size < batchBytes {
		size += len(frames[n]) + 1
		n++
	}
	return n
}

type inFrame struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
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
		select {
		case <-c.done:
			// Closing: drain what the peer still sends until its close
			// frame arrives, so the close handshake completes instead of
			// the socket being reset with unread data.
			continue
		default:
		}
		var f inFrame
		// encoding/json would replace invalid UTF-8 with U+FFFD silently.
		parsed := typ == websocket.MessageText && utf8.Valid(data) && json.Unmarshal(data, &f) == nil
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
			c.reply(errorFrame("", CodeBadRequest, "Frames are JSON text messages in valid UTF-8."))
			continue
		}
		if len(f.ID) > maxFrameIDLen {
			c.reply(errorFrame("", CodeBadRequest, "id has at most "+strconv.Itoa(maxFrameIDLen)+" characters."))
			continue
		}
		switch f.Type {
		case "ping":
			c.reply(mustFrame(map[string]any{"type": "pong", "id": f.ID}))
		case "act", "say":
			c.handle(ctx, t, f)
		default:
			c.reply(errorFrame(f.ID, CodeBadRequest, "Unknown frame type; use act, say or ping."))
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
	switch {
	case f.ID == "":
		c.reply(errorFrame("", CodeBadRequest, f.Type+" needs an id."))
		return
	case c.role != rolePlayer:
		c.reply(errorFrame(f.ID, CodeForbidden, "Spectators cannot "+f.Type+"; take a seat to play."))
		return
	}
	// The engine's one rule for free text: no control characters (NUL…),
	// valid UTF-8, bounded length.
	text, err := engine.CleanText("text", f.Text, maxLen)
	if err == nil && text == "" {
		err = engine.Errorf(engine.EINVALID, "text must not be empty.")
	}
	if err != nil {
		c.reply(errorFrame(f.ID, CodeBadRequest, engine.ErrorMessage(err)))
		return
	}
	f.Text = text
	err = t.call(ctx, func() error {
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
	var r refusal
	if errors.As(err, &r) {
		// Off the table goroutine: was it this very act, sent before?
		var status string
		if status, err = t.answerRetry(ctx, c.player.ID, f.ID, r.err); err == nil {
			c.reply(mustFrame(map[string]any{"type": "ack", "id": f.ID, "status": status}))
			return
		}
	}
	if err != nil {
		code, msg := ErrorCode(err)
		if code == CodeInternal {
			t.log.Error("frame failed", "type", f.Type, "err", err)
		}
		c.reply(errorFrame(f.ID, code, msg))
	}
}

// join registers c: welcome, then a replay of the events after since or a
// snapshot, all queued before any later event can be. The table goroutine
// never reads the disk for it (issue 11): it hands out the seq boundary,
// the replay up to it is read here, and the table then adds what came
// after from its recent events (or, if more came, a snapshot).
func (h *Hub) join(ctx context.Context, t *table, c *client, since int64) error {
	var boundary int64
	replay := false
	if err := t.call(ctx, func() error {
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
	return t.call(ctx, func() error {
		for _, e := range evs {
			c.send(eventFrame(e))
		}
		var gap []engine.Event
		for _, e := range t.recent {
			if e.Seq > boundary {
				gap = append(gap, e)
			}
		}
		if int64(len(gap)) == t.seq-boundary {
			for _, e := range gap {
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
	c.joining = false
	t.clients[c] = struct{}{}
	t.updateSummary()
	t.connOpened(c)
	if c.role == rolePlayer { // the snapshot's online seats
		t.stateChanged()
	}
}

func (t *table) part(c *client) {
	if _, ok := t.clients[c]; ok {
		delete(t.clients, c)
		t.updateSummary()
		t.connClosed(c)
		if c.role == rolePlayer {
			t.stateChanged()
		}
	}
}
