package hub

import (
	"errors"
	"time"
	"unicode/utf8"

	"tavern/internal/store"
)

// When the store cannot write (a full disk, an I/O error: store.ErrUnavailable),
// the hub tells the truth and waits for it. The store (SQLite and PostgreSQL
// alike: storetest.RunFaults) retries the commits it had taken until they
// land and refuses new ones at once, so: acts and chat
// lines are answered `unavailable` ("the server cannot save right now") and
// nothing is acked that is not durable; no turn starts, for its result could
// not be saved (the table looks again every storeRecheck); a turn that ends
// while it cannot write is played again later, its attempt not counted; a
// table whose commits wait does not restart, and sockets that connect meanwhile
// are told the same. /readyz answers 503 with the store's reason (Health).
// All of it ends by itself once a write succeeds again.

// storeRecheck is how often a table with a turn to play looks whether the
// store writes again.
const storeRecheck = time.Second

// storeFault returns why the store cannot write now, or nil.
func (h *Hub) storeFault() error {
	if h.cfg.StoreHealth == nil {
		return nil
	}
	return h.cfg.StoreHealth()
}

// Health returns nil when the hub is ready to serve: started, not closing,
// its store writing. Otherwise it says why not, for /readyz. Safe for
// concurrent use.
func (h *Hub) Health() error {
	switch {
	case !h.started.Load():
		return errors.New("starting")
	case h.closed.Load():
		return errors.New("shutting down")
	}
	if err := h.storeFault(); err != nil {
		return err
	}
	return nil
}

// joinTimeout bounds the table's answer to a socket that connects: past
// it (the table waits for a commit the store retries) the socket is told
// why (joinError). It is short while the store cannot write, for then the
// wait is likely for the disk.
func (h *Hub) joinTimeout() time.Duration {
	if h.storeFault() != nil {
		return 2 * time.Second
	}
	return 10 * time.Second
}

// joinError is the truth about a socket the table could not take: the
// server shuts down, or the store cannot write, or err.
func (h *Hub) joinError(err error) error {
	switch {
	case h.ctx.Err() != nil || h.closed.Load():
		return errShuttingDown
	case h.storeFault() != nil:
		return store.ErrUnavailable
	}
	return err
}

// closeReason fits msg in a close frame (123 bytes), on a rune boundary.
func closeReason(msg string) string {
	const limit = 123
	if len(msg) <= limit {
		return msg
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}

// cannotSave reports whether err is the store refusing a write.
func cannotSave(err error) bool { return errors.Is(err, store.ErrUnavailable) }

// waitForStore reports whether the store cannot write; if so the table
// looks again after storeRecheck (once, however often it is asked).
func (t *table) waitForStore() bool {
	if t.h.storeFault() == nil {
		return false
	}
	if !t.storeWait {
		t.storeWait = true
		t.h.after(storeRecheck, func() {
			t.postSystem(func() {
				t.storeWait = false
				t.maybeStart()
			})
		})
	}
	return true
}

// unsaved handles a turn whose result the store refused: the turn is
// played again once the store writes, its attempt not counted (the DM did
// not fail).
func (t *table) unsaved(j *job, err error) {
	t.log.Warn("turn not saved: the store cannot write; it will be played again", "turn", j.turnNo, "kind", j.kind, "err", err)
	// What it streamed is not saved: the turn streams again when played.
	j.deltas.withdraw()
	if j.action != nil {
		t.queueLife(t.acts.setLife(j.action.ID, store.ActionPending, ""))
	}
}

// cannotSaveNotice is what the tables' clients read while the store
// cannot write (the snapshot's cannot_save): the event that would say so
// could not be saved either.
const cannotSaveNotice = "The server cannot save right now. Actions wait and are played once it can."

// storeWatch pushes a state to every loaded table each time the store
// stops or starts writing again, so pages show cannot_save while it
// lasts. Until the hub closes.
func (h *Hub) storeWatch() {
	tick := time.NewTicker(storeRecheck)
	defer tick.Stop()
	down := false
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
		}
		if now := h.storeFault() != nil; now != down {
			down = now
			h.mu.RLock()
			for _, t := range h.tables {
				t.tryPost(t.stateChanged)
			}
			h.mu.RUnlock()
		}
	}
}
