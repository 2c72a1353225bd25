package hub

import "sync"

// deltaStream carries one turn's narration deltas to the table's clients.
// The model's stream appends text; one post to the table goroutine at a
// time sends whatever has gathered since as one narration_delta frame.
// A model streaming at reading speed still gets about a frame per chunk,
// while one that hands over its narration faster than the table fans out
// (the offline narrator gives it all at once) costs a frame or two per
// turn instead of one per chunk for every client. Deltas are droppable:
// the narration event that ends the turn carries the whole text.
type deltaStream struct {
	turnID string
	// post queues work on the table goroutine unless its inbox is full;
	// fanout sends a frame to every client (on the table goroutine).
	post   func(func()) bool
	fanout func(frame []byte)
	// withdrawnTo sends a frame every client must get.
	withdrawnTo func(frame []byte)

	mu     sync.Mutex
	text   []byte
	posted bool // a flush is queued on the table goroutine
	// sent: a frame went out; withdrawn: the attempt failed, and what it
	// streamed is dropped (withdraw).
	sent, withdrawn bool
}

// add appends text and queues a flush unless one is queued already. Called
// from the turn's job.
func (d *deltaStream) add(text string) {
	d.mu.Lock()
	d.text = append(d.text, text...)
	post := !d.posted
	d.posted = true
	d.mu.Unlock()
	if post && !d.post(d.flush) {
		// The inbox is full: keep the text for the next delta's flush.
		d.mu.Lock()
		d.posted = false
		d.mu.Unlock()
	}
}

// flush sends the gathered text to every client. Runs on the table
// goroutine.
func (d *deltaStream) flush() {
	d.mu.Lock()
	text := string(d.text)
	d.text = d.text[:0]
	d.posted = false
	if d.withdrawn {
		text = ""
	}
	d.sent = d.sent || text != ""
	d.mu.Unlock()
	if text == "" {
		return
	}
	d.fanout(narrationDeltaFrame(d.turnID, text))
}

// streamed reports whether any text came (sent, or gathered to be).
func (d *deltaStream) streamed() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sent || len(d.text) > 0
}

// withdraw drops the text of a failed attempt: what is gathered is not
// sent, and clients that were sent some are told to drop it
// (narration_withdrawn), never dropped itself. Runs on the table
// goroutine; later calls do nothing.
func (d *deltaStream) withdraw() {
	d.mu.Lock()
	sent := d.sent && !d.withdrawn
	d.withdrawn = true
	d.text = nil
	d.mu.Unlock()
	if sent {
		d.withdrawnTo(narrationWithdrawnFrame(d.turnID))
	}
}

// newDeltaStream is the delta stream of turn turnID at t.
func (t *table) newDeltaStream(turnID string) *deltaStream {
	return &deltaStream{turnID: turnID, post: t.tryPost, fanout: func(frame []byte) {
		if t.st.Config.Words() {
			return // a model's raw text may hold NPC numbers: the narration event, redacted, says it all
		}
		for c := range t.clients {
			c.sendDroppable(frame)
		}
	}, withdrawnTo: func(frame []byte) {
		for c := range t.clients {
			c.send(frame)
		}
	}}
}
