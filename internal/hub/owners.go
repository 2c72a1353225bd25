package hub

import (
	"context"
	"errors"

	"tavern/internal/store"
)

// Several nodes (DESIGN.md "Beyond one machine"): the store decides which
// node runs a table. The hub loads a table when something needs it, and
// the store's LoadTable claims it then (store.ErrNotOwner when another
// live node runs it); the hooks below are how the store tells the hub the
// rest.

// Unload takes table id off this node because another node owns it now
// (its commit was fenced, or this node's lease lapsed): the commits in
// flight are answered as failed, its sockets close 1012 so that clients
// reconnect (PROTOCOL.md "Several nodes") and it leaves the hub without
// reloading. It returns at once; safe for concurrent use.
func (h *Hub) Unload(id string) {
	h.mu.RLock()
	t, ok := h.tables[id]
	h.mu.RUnlock()
	if !ok {
		return
	}
	go t.postSystem(func() {
		if t.evicted {
			return
		}
		t.restart(&inflight{err: store.ErrFenced})
	})
}

// Adopt loads table id, which the store found orphaned (its node is gone)
// with an open action or a fight: loading claims it, and its actions are
// played and its timers armed as at Start. A table another node adopted
// first is left to it.
func (h *Hub) Adopt(ctx context.Context, id string) {
	if _, err := h.get(ctx, id); err != nil && !errors.Is(err, store.ErrNotOwner) {
		h.log.Warn("orphaned table not adopted", "table", id, "err", err)
		return
	}
}

// Sockets returns how many websockets this hub serves, for the store's
// node row (the operator's overview).
func (h *Hub) Sockets() int {
	h.open.mu.Lock()
	defer h.open.mu.Unlock()
	n := 0
	for _, c := range h.open.byAddr {
		n += c
	}
	return n
}

// Drain makes Close hand the tables over: each, once its running turn and
// its commits are done, is released to the store (Forget) and its sockets
// close 1012, "reconnect at once", instead of 1001. Call it before Close
// when the node stops and others go on.
func (h *Hub) Drain() { h.draining.Store(true) }
