package hub

import (
	"context"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The socket's write side, in the shape of coder/websocket's chat example
// (internal/examples/chat): a buffered outgoing queue that no sender ever
// waits on, one writer goroutine per socket that takes the queue and
// writes it with Conn.Write, a timeout on every write, and a client that
// falls behind closed with 1008 "too slow" (PROTOCOL.md "Limits and close
// codes"). Each kind of frame has its overflow policy in the one method
// that queues it: send and hold, sendDroppable, reply.

const (
	// outQueue is how many frames may wait for a socket's writer besides
	// those it is writing. It must hold a healthy client's bursts: a
	// table publishes the events of all its commits that landed at once
	// (up to ~40 frames seen at 100 saturated tables), and at 64 two such
	// bursts while the writer waited for a CPU closed clients that were
	// reading. The queue is a pooled list, held only while frames wait,
	// so its bound costs an idle socket nothing. The join's welcome,
	// replay and snapshot go to the backlog instead, never dropped.
	outQueue = 256
	// A batched message (?batch=1) holds at most batchFrames frames and
	// stops growing past batchBytes.
	batchFrames = 64
	batchBytes  = 64 << 10
	// writeTimeout bounds each message's write: a client that takes
	// nothing for that long is gone.
	writeTimeout = 5 * time.Second
	// closeTimeout bounds a close handshake (the library's own bound is
	// 5 s to write the close frame plus 5 s for the answer); past it the
	// TCP connection is dropped. A client too slow to read its frames
	// would otherwise hold its socket for ~25 s and see 1006.
	closeTimeout = 2 * time.Second
)

// frameList is a queue of frames; the lists are pooled, so a socket with
// nothing queued holds none.
type frameList struct{ frames [][]byte }

var frameLists = sync.Pool{New: func() any { return &frameList{frames: make([][]byte, 0, 8)} }}

// recycle gives a list the writer took back to the pool.
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

// full reports whether the queue holds outQueue frames. c.mu is held.
func (c *client) full() bool { return c.queue != nil && len(c.queue.frames) >= outQueue }

// appendLocked adds frame to the queue, or to the backlog during the
// join. c.mu is held; the caller has checked the queue's room.
func (c *client) appendLocked(frame []byte) {
	if c.joining {
		c.backlog = append(c.backlog, frame)
		return
	}
	if c.queue == nil {
		c.queue = frameLists.Get().(*frameList)
	}
	c.queue.frames = append(c.queue.frames, frame)
}

// wakeLocked tells the writer there is work: frames, or a close. It never
// blocks; one pending wake covers any number of frames. c.mu is held.
func (c *client) wakeLocked() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send queues one of the table's frames (an event, an ack, an error, a
// state frame) and wakes the writer.
func (c *client) send(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holdLocked(frame) {
		c.wakeLocked()
	}
}

// hold queues frame as send does but leaves the writer asleep until push,
// so the frames of one settle leave together (table.publish, pushHeld):
// a batching client gets them in one message.
func (c *client) hold(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holdLocked(frame)
}

// holdLocked is the policy of the table's frames: they are numbered or
// answer the client, so they are never dropped and never waited for. A
// client whose queue is full is closed with 1008 "too slow"; it may
// resume with since. It reports whether frame was queued. c.mu is held.
func (c *client) holdLocked(frame []byte) bool {
	switch {
	case c.closing:
		return false
	case c.full():
		c.closeLocked(websocket.StatusPolicyViolation, "too slow", false)
		return false
	}
	c.appendLocked(frame)
	return !c.joining
}

// push wakes the writer for the frames hold queued.
func (c *client) push() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue != nil && !c.joining {
		c.wakeLocked()
	}
}

// sendDroppable is the policy of narration deltas: not numbered, not
// replayed, so one that finds the queue full (or the client joining) is
// dropped; the narration event that ends the turn carries the whole text.
func (c *client) sendDroppable(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.joining || c.closing || c.full() {
		return
	}
	c.appendLocked(frame)
	c.wakeLocked()
}

// reply is the policy of the answers the reader itself gives (pong, an
// error for a bad frame): it waits for room, so a client that floods
// without reading stops being read rather than overflowing the queue.
func (c *client) reply(frame []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.closing && !c.joining && c.full() {
		c.room.Wait()
	}
	if c.closing {
		return
	}
	c.appendLocked(frame)
	if !c.joining {
		c.wakeLocked()
	}
}

// close asks the writer to write the queued frames and close the socket
// with code and reason. It never blocks; only the first call counts.
func (c *client) close(code websocket.StatusCode, reason string) { c.closeWith(code, reason, true) }

func (c *client) closeWith(code websocket.StatusCode, reason string, flush bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(code, reason, flush)
}

// closeLocked records the close for the writer; flush false drops what
// is queued (a client too slow to take it). c.mu is held.
func (c *client) closeLocked(code websocket.StatusCode, reason string, flush bool) {
	if c.closing {
		return
	}
	c.closing, c.closeCode, c.closeReason, c.flush = true, code, reason, flush
	c.room.Broadcast()
	c.wakeLocked()
}

// isClosing reports whether the client was asked to close.
func (c *client) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// registered ends the join: live frames go to the queue from now on, and
// the writer sends the backlog first. Runs on the table goroutine.
func (c *client) registered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.joining = false
	if len(c.backlog) > 0 {
		c.wakeLocked()
	}
}

// writeLoop is the socket's writer, started with the client: it writes
// the join's backlog, then each time it is woken all that is queued. It
// is the only closer of the socket: asked to close, it first writes the
// queued frames (unless the client was too slow to take them), then runs
// the close handshake, and returns.
func (c *client) writeLoop() {
	defer close(c.closed)
	for range c.wake {
		for {
			c.mu.Lock()
			frames, list := c.backlog, (*frameList)(nil)
			c.backlog = nil
			if frames == nil && c.queue != nil && !c.joining {
				list, c.queue = c.queue, nil
				frames = list.frames
			}
			closing, flush := c.closing, c.flush
			c.room.Broadcast()
			c.mu.Unlock()
			if closing && (!flush || len(frames) == 0) {
				c.shut(len(frames))
				list.recycle()
				return
			}
			if len(frames) == 0 {
				break
			}
			if err := c.write(frames); err != nil {
				c.closeWith(websocket.StatusPolicyViolation, "write failed", false)
			}
			list.recycle()
		}
	}
}

// shut runs the close handshake; dropped is how many queued frames the
// client was too slow to get.
func (c *client) shut(dropped int) {
	if !c.flush && c.log != nil {
		c.log.Warn("closing websocket", "code", int(c.closeCode), "reason", c.closeReason, "player", c.playerID(), "queued", dropped)
	}
	// The handshake gets closeTimeout; then the connection is dropped.
	// CloseNow cannot do it: once Close has begun it only waits, and
	// Close drains the rest of a frame the peer stopped sending midway
	// (after a 1009 it held the socket for minutes).
	drop := time.AfterFunc(closeTimeout, c.drop)
	_ = c.conn.Close(c.closeCode, c.closeReason)
	drop.Stop()
}

// drop closes the TCP connection under the socket, which ends any read or
// write the library is blocked in.
func (c *client) drop() {
	if c.burst != nil {
		_ = c.burst.Conn.Close()
		return
	}
	_ = c.conn.CloseNow()
}

// write writes frames in order: one message each, or for a client that
// asked for batches (?batch=1, PROTOCOL.md "Batched frames") as few
// messages holding JSON arrays of frames.
func (c *client) write(frames [][]byte) error {
	if c.burst != nil && len(frames) > 1 {
		c.burst.hold()
		if err := c.writeFrames(frames); err != nil {
			_ = c.burst.release()
			return err
		}
		return c.bounded(c.burst.release)
	}
	return c.writeFrames(frames)
}

// writeFrames writes frames as write says, each message with Conn.Write.
func (c *client) writeFrames(frames [][]byte) error {
	for len(frames) > 0 {
		n := 1
		if c.batch {
			n = batchLen(frames)
		}
		if err := c.writeMessage(frames[:n]); err != nil {
			return err
		}
		frames = frames[n:]
	}
	return nil
}

// batchBufs hold batched messages while they are written.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// writeMessage writes one message within writeTimeout: frames[0] alone,
// or the array of frames. A batch is assembled before the write rather
// than streamed through Conn.Writer, which sends each Write as a frame of
// its own (a fragment, with its own header).
func (c *client) writeMessage(frames [][]byte) error {
	if len(frames) == 1 {
		return c.writeText(frames[0])
	}
	bp := batchBufs.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	for i, f := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	b = append(b, ']')
	err := c.writeText(b)
	if cap(b) <= 2*batchBytes {
		*bp = b[:0]
		batchBufs.Put(bp)
	}
	return err
}

// writeText writes one text message. Its timeout is the client's timer,
// armed for writeTimeout around the write, which drops the connection
// when it fires, as the library does when a write's context expires. A
// context per write (context.WithTimeout, the library's AfterFunc on it)
// was a tenth of the fan-out run's CPU profile.
func (c *client) writeText(p []byte) error {
	return c.bounded(func() error { return c.conn.Write(context.Background(), websocket.MessageText, p) })
}

// bounded runs write with the client's timer armed for writeTimeout.
func (c *client) bounded(write func() error) error {
	if c.timeout == nil {
		c.timeout = time.AfterFunc(writeTimeout, func() { _ = c.conn.CloseNow() })
	} else {
		c.timeout.Reset(writeTimeout)
	}
	err := write()
	c.timeout.Stop()
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
