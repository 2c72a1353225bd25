package store

import (
	"errors"
	"time"

	"tavern/internal/engine"
)

// ErrFenced fails a commit of a table this node no longer owns
// (DESIGN.md "Beyond one machine": another node claimed it, with a higher
// epoch). Nothing of the commit was written; the table must unload
// without reloading, and its sockets close 1012 so that clients reconnect
// to the owner. It is an engine EUNAVAILABLE error, so the act or line
// it refuses reaches its client as the protocol's `unavailable` (send it
// again), never `internal`.
var ErrFenced = engine.Errorf(engine.EUNAVAILABLE, "The table moved to another server; not saved, try again.")

// ErrNotOwner fails the load of a table another live node owns: the
// request belongs there (PROTOCOL.md "Several nodes").
var ErrNotOwner = errors.New("store: another node owns the table")

// Node is one server of a cluster as its row says (the operator's
// overview): State is "alive", "draining" or "dead" (its lease lapsed).
type Node struct {
	ID, Addr, State string
	Tables, Sockets int
	// Players and Spectators count its sockets by role; Active its
	// tables with a socket or a running turn.
	Players, Spectators, Active int
	ExpiresAt                   time.Time
}

// Owner is the node that runs a table and the epoch of its claim.
type Owner struct {
	Node, Addr string
	Epoch      int64
}
