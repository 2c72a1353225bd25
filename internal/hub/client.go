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
	"tavern/internal/jsonstr"
)

const (
	// Subprotocol is the websocket subprotocol of PROTOCOL.md v1.
	Subprotocol = "tavern.v1"
	readLimit   = 16 << 10
	// outQueue is how many frames may wait for a socket's writer besides
	// those it is writing; a client that falls this far behind is closed
	// with 1008 "too slow". The queue is a pooled list, held only while
	// frames wait, so its bound costs an idle socket nothing (a fixed
	// 1,024-slot queue was most of the live heap). It must hold a healthy
	// client's bursts: a table publishes the events of all its commits
	// that landed at once (up to ~40 frames seen at 100 saturated
	// tables), and at 64 two such bursts while the socket's writer waited
	// for a CPU closed clients that were reading. The join's welcome,
	// replay and snapshot go to the backlog instead, never dropped.
	outQueue = 256
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

// client is one websocket connection. It has one goroutine of its own,
// the reader; frames are written by whoever queues them when the socket
// takes them at once (push), and a writer runs only while some write
// must wait or a close is to be made (an idle socket's goroutine stack
// and write buffer were most of its memory, issue 12). send never
// blocks: a client that cannot keep up is closed.
type client struct {
	conn   *websocket.Conn
	wire   *wire
	log    interface{ Warn(string, ...any) }
	role   role
	player *engine.Player
	seat   string
	// batch: the client opted into messages holding a JSON array of
	// frames (?batch=1); state: into state frames (?state=1).
	batch, state bool

	mu sync.Mutex // guards the fields below
	// room is signalled when the writer takes the queue or the client
	// starts closing: reply waits on it for room.
	room sync.Cond
	// queue holds the frames waiting for the writer (at most outQueue),
	// from a pool while it is not empty.
	queue *frameList
	// joining is true until the table registers the client; until then
	// frames go to backlog, which the writer sends first and which has
	// no bound (the join's replay can be far longer than the queue), and
	// no writer starts.
	joining bool
	backlog [][]byte
	writing bool // a writer goroutine runs
	// Set once, by closeWith: how the writer closes the socket.
	closing     bool
	closeCode   websocket.StatusCode
	closeReason string
	flush       bool
	closed      chan struct{} // closed once the writer has closed the socket
}

// frameList is a queue of frames; the lists are pooled, so a socket with
// nothing queued holds none.
type frameList struct{ frames [][]byte }

var frameLists = sync.Pool{New: func() any { return &frameList{frames: make([][]byte, 0, 8)} }}

func newClient(conn *websocket.Conn, w *wire, log interface{ Warn(string, ...any) }, rl role, p *engine.Player) *client {
	c := &client{conn: conn, wire: w, log: log, role: rl, player: p, joining: true, closed: make(chan struct{})}
	c.room.L = &c.mu
	return c
}

// overflow says what enqueue does with a frame that finds the queue full.
type overflow int

const (
	closeSlow overflow = iota // close the client with 1008 "too slow"
	dropFrame                 // drop the frame
	waitRoom                  // wait until the writer makes room
)

// send queues frame and writes it at once if it can (push); a client
// whose queue is full is closed with 1008.
func (c *client) send(frame []byte) { c.enqueue(frame, closeSlow, true) }

// hold queues frame as send does but leaves the write to a later push, so
// that the frames of one settle leave in one write (publish).
func (c *client) hold(frame []byte) { c.enqueue(frame, closeSlow, false) }

// sendDroppable queues frame unless the queue is full (narration deltas:
// not numbered, not replayed, so losing one never desynchronises). A
// joining client gets none.
func (c *client) sendDroppable(frame []byte) { c.enqueue(frame, dropFrame, true) }

// reply queues a frame answering one of the client's own (pong, error),
// from its reader: it waits for room, so a client that floods without
// reading stops being read rather than overflowing the queue.
func (c *client) reply(frame []byte) { c.enqueue(frame, waitRoom, true) }

func (c *client) enqueue(frame []byte, full overflow, now bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.joining {
		if full != dropFrame {
			c.backlog = append(c.backlog, frame)
		}
		return
	}
	for !c.closing && c.queue != nil && len(c.queue.frames) >= outQueue {
		switch full {
		case closeSlow:
			c.closeLocked(websocket.StatusPolicyViolation, "too slow", false)
			return
		case dropFrame:
			return
		}
		c.room.Wait()
	}
	if c.closing {
		return
	}
	if c.queue == nil {
		c.queue = frameLists.Get().(*frameList)
	}
	c.queue.frames = append(c.queue.frames, frame)
	if now {
		c.pushLocked()
	}
}

// push writes the queued frames from the calling goroutine when no writer
// runs and the connection takes them at once, else leaves them to the
// writer, which it starts. A socket that keeps up (nearly all of them)
// thus costs no goroutine per burst: starting one and the scheduler's
// hand-off were a fifth of fan-out's CPU with says spread over the
// second (issue 12). It never waits for the client.
func (c *client) push() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pushLocked()
}

// pushLocked is push with c.mu held; it lets go of c.mu while it writes.
func (c *client) pushLocked() {
	if c.writing || c.queue == nil || c.closing {
		return // the writer runs, or has nothing to write
	}
	list := c.queue
	if !c.wire.canTry(list.frames) {
		c.startWriter()
		return
	}
	c.queue, c.writing = nil, true // this goroutine is the writer meanwhile
	c.room.Broadcast()
	c.mu.Unlock()
	sent, err := c.tryBurst(list.frames)
	list.recycle()
	c.mu.Lock()
	c.pushed(sent, err)
}

// pushed ends a push's write (sent: the connection took all of it; err:
// it failed): it starts the writer for the rest of the write, the frames
// queued meanwhile, or a close asked for meanwhile, which found the push
// writing and left the socket to it. c.mu is held.
func (c *client) pushed(sent bool, err error) {
	c.writing = false
	if err != nil {
		c.closeLocked(websocket.StatusPolicyViolation, "write failed", false)
	}
	if !sent || c.queue != nil || c.closing {
		c.startWriter()
	}
}

// startWriter starts the writer unless it runs. c.mu is held.
func (c *client) startWriter() {
	if !c.writing {
		c.writing = true
		go c.writeLoop()
	}
}

// close asks the writer to flush the queued frames and close the socket
// with code and reason. It never blocks; only the first call counts.
func (c *client) close(code websocket.StatusCode, reason string) { c.closeWith(code, reason, true) }

func (c *client) closeWith(code websocket.StatusCode, reason string, flush bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(code, reason, flush)
}

func (c *client) closeLocked(code websocket.StatusCode, reason string, flush bool) {
	if c.closing {
		return
	}
	c.closing, c.closeCode, c.closeReason, c.flush = true, code, reason, flush
	c.room.Broadcast()
	c.startWriter()
}

// isClosing reports whether the client was asked to close.
func (c *client) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// registered ends the join: live frames go to the queue from now on, and
// the writer sends the backlog. Runs on the table goroutine.
func (c *client) registered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.joining = false
	if len(c.backlog) > 0 {
		c.startWriter()
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

// eventFrame is PROTOCOL.md's event frame of e.
func eventFrame(e engine.Event) []byte { return eventFrameOf(e, mustFrame(e.Data)) }

// eventFrameOf is the event frame of e, whose data is already JSON (the
// table encodes it once, for the store's row and the frame): the bytes
// json.Marshal gives for struct{Type string; engine.Event}, without
// encoding the data again.
func eventFrameOf(e engine.Event, data json.RawMessage) []byte {
	b := make([]byte, 0, len(data)+len(e.Kind)+len(e.Turn)+96)
	b = append(b, `{"type":"event","seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"ts":"`...)
	b = append(e.TS.AppendFormat(b, time.RFC3339Nano), `","kind":`...)
	b = jsonstr.Append(b, string(e.Kind))
	if e.Turn != "" {
		b = append(b, `,"turn":`...)
		b = jsonstr.Append(b, e.Turn)
	}
	b = append(b, `,"data":`...)
	b = append(b, data...)
	return append(b, '}')
}

// eventData encodes the data of each of evs, in order.
func eventData(evs []engine.Event) ([]json.RawMessage, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		data, err := json.Marshal(e.Data)
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", e.Kind, err)
		}
		out[i] = data
	}
	return out, nil
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
	sb := &smallBuffers{ResponseWriter: w}
	conn, err := websocket.Accept(sb, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		h.log.Debug("websocket accept", "err", err)
		return
	}
	conn.SetReadLimit(readLimit)
	if !h.trackSocket() {
		conn.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	c := newClient(conn, sb.wire, t.log, rl, p)
	c.batch, c.state = q.Get("batch") == "1", q.Get("state") == "1"
	// Reads are not tied to the hub's context: on shutdown the table closes
	// the socket with 1001, and the close handshake needs the reader.
	ctx := context.Background()
	if err := h.join(ctx, t, c, since); err != nil {
		defer h.untrackSocket()
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
	// The handler returns: a goroutine of its own reads, on a stack a
	// fraction of the handler's, and the request and net/http's buffers
	// are garbage.
	go func() {
		defer h.untrackSocket()
		defer t.post(func() { t.part(c) })
		c.readLoop(ctx, t)
		c.close(websocket.StatusNormalClosure, "")
		<-c.closed // the writer has closed the socket (handshake bounded by closeTimeout)
	}()
}

// writeLoop runs while c has frames to write: what a push left unwritten,
// the join's backlog, then the queue, each time all that is queued in one
// burst of the wire (one write(2)). It is the only closer of the socket:
// asked to close, it first writes the queued frames (unless the client
// was too slow to take them), then runs the close handshake. A client
// that opted into batches gets the frames of a burst in messages of
// several frames.
func (c *client) writeLoop() {
	for {
		c.mu.Lock()
		frames, list := c.backlog, (*frameList)(nil)
		c.backlog = nil
		if frames == nil && c.queue != nil {
			list, c.queue = c.queue, nil
			frames = list.frames
		}
		if c.closing && !c.flush {
			c.mu.Unlock()
			c.shut(len(frames))
			list.recycle()
			return
		}
		if frames == nil && !c.wire.pending() {
			if c.closing {
				c.mu.Unlock()
				c.shut(0)
				return
			}
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.room.Broadcast()
		c.mu.Unlock()
		if err := c.burst(frames); err != nil {
			c.closeWith(websocket.StatusPolicyViolation, "write failed", false)
		}
		list.recycle()
	}
}

// recycle gives a queue the writer took back to the pool.
func (l *frameList) recycle() {
	if l == nil {
		return
	}
	clear(l.frames)
	if cap(l.frames) <= 2*outQueue {
		l.frames = l.frames[:0]
		frameLists.Put(l)
	}
}

// shut runs the close handshake; dropped is how many queued frames the
// client was too slow to get.
func (c *client) shut(dropped int) {
	defer close(c.closed)
	if !c.flush && c.log != nil {
		c.log.Warn("closing websocket", "code", int(c.closeCode), "reason", c.closeReason, "player", c.playerID(), "queued", dropped)
	}
	// The handshake gets closeTimeout; then the connection is dropped
	// (CloseNow unblocks Close).
	drop := time.AfterFunc(closeTimeout, func() { _ = c.conn.CloseNow() })
	_ = c.conn.Close(c.closeCode, c.closeReason)
	drop.Stop()
}

// burst writes frames as messages (one each, or batches) after whatever
// the wire holds, gathered into one write per wireFlush bytes.
func (c *client) burst(frames [][]byte) error {
	for len(frames) > 0 {
		frames = c.gather(frames)
		if c.wire.size() >= wireFlush {
			if err := c.wire.flush(); err != nil {
				return err
			}
		}
	}
	return c.wire.flush()
}

// tryBurst gathers frames (at most wireFlush bytes, canTry) and writes
// them if the connection takes them without waiting; whatever it does not
// take stays in the wire for the writer (sent false).
func (c *client) tryBurst(frames [][]byte) (sent bool, err error) {
	for len(frames) > 0 {
		frames = c.gather(frames)
	}
	return c.wire.tryFlush()
}

// gather adds the first message of frames to the wire and returns the
// frames after it.
func (c *client) gather(frames [][]byte) [][]byte {
	n := 1
	if c.batch {
		n = batchLen(frames)
	}
	c.wire.message(frames[:n])
	return frames[n:]
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
		read := time.Now()
		if c.isClosing() {
			// Drain what the peer still sends until its close frame
			// arrives, so the close handshake completes instead of the
			// socket being reset with unread data.
			continue
		}
		var f inFrame
		// encoding/json would replace invalid UTF-8 with U+FFFD silently.
		parsed := typ == websocket.MessageText && utf8.Valid(data)
		if parsed {
			f, parsed = readInFrame(data)
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
			c.handle(ctx, t, f, read)
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
	// The answer comes on the table goroutine once the act or line is
	// durable (pipeline.go), queued there in order with the events. The
	// reader does not wait for it but goes back to reading: waiting cost a
	// goroutine wake-up per frame, 2.5 % of the server's CPU in the
	// fan-out run (issue 12). The inbox bounds what one reader can queue
	// (post blocks while it is full), and the rate limit what one player
	// can send.
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
	c.registered()
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
