package hub

import (
	"context"
	"errors"
	"time"

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
	// One of the hub's goroutines, so that Close waits for it; none once
	// Close waits, when the table stops anyway.
	h.spawn(func() {
		t.postSystem(func() {
			if t.evicted {
				return
			}
			t.restart(&inflight{err: store.ErrFenced})
		})
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

// Cluster is what a store that runs several nodes (internal/pgdb) tells
// the operator's views. A store without it is one node.
type Cluster interface {
	Nodes(ctx context.Context) ([]store.Node, error)
	Owners(ctx context.Context) (map[string]store.Owner, error)
}

// NodeView is one node in the operator's overview (PROTOCOL.md "Several
// nodes"). ExpiresAt is when its lease lapses: null on SQLite, whose one
// node holds no lease, but always present, as the protocol lists it.
type NodeView struct {
	ID        string     `json:"id"`
	Addr      string     `json:"addr"`
	State     string     `json:"state"`
	Tables    int        `json:"tables"`
	Sockets   int        `json:"sockets"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// OwnerView is the node that runs a table, in the operator's list.
type OwnerView struct {
	Node  string `json:"node"`
	Addr  string `json:"addr"`
	Epoch int64  `json:"epoch"`
}

// localNode names the one node of a store without a Cluster.
const localNode = "local"

func (h *Hub) cluster() Cluster {
	s := h.cfg.Store
	if d, ok := s.(deadlined); ok {
		s = d.s
	}
	c, _ := s.(Cluster)
	return c
}

// Connections returns this hub's players' and spectators' sockets and
// its active tables (open, with a socket or a running turn), counted as
// the overview counts them, for the node's row. Safe for concurrent use.
func (h *Hub) Connections() (players, spectators, active int) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for _, t := range h.tables {
		c := t.admin.Load()
		if c == nil || c.Closed {
			continue
		}
		players += c.Players
		spectators += c.Spectators
		if c.Busy || c.Players+c.Spectators > 0 {
			active++
		}
	}
	return players, spectators, active
}

// nodesLoad adds up what the live nodes of a cluster serve, as their rows
// say (renewed every few seconds).
type nodesLoad struct {
	Connections Connections
	Active      int
}

// nodes lists the nodes for the overview: the store's, or this one. On a
// cluster it adds up their load too (nil on one node: the hub's own
// tables are all there is).
func (h *Hub) nodes(ctx context.Context) ([]NodeView, *nodesLoad, error) {
	c := h.cluster()
	if c == nil {
		h.mu.RLock()
		loaded := len(h.tables)
		h.mu.RUnlock()
		return []NodeView{{ID: localNode, State: "alive", Tables: loaded, Sockets: h.Sockets()}}, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	ns, err := c.Nodes(ctx)
	if err != nil {
		return nil, nil, err
	}
	out := make([]NodeView, 0, len(ns))
	load := &nodesLoad{}
	for _, n := range ns {
		exp := n.ExpiresAt
		out = append(out, NodeView{ID: n.ID, Addr: n.Addr, State: n.State, Tables: n.Tables, Sockets: n.Sockets, ExpiresAt: &exp})
		if n.State != "dead" {
			load.Connections.Players += n.Players
			load.Connections.Spectators += n.Spectators
			load.Active += n.Active
		}
	}
	return out, load, nil
}

// setOwners fills the owner of each row of the operator's list: the
// store's, or this node for a loaded table on a store without a Cluster.
func (h *Hub) setOwners(ctx context.Context, rows []AdminTable) error {
	c := h.cluster()
	if c == nil {
		for i := range rows {
			if rows[i].Loaded {
				rows[i].Owner = &OwnerView{Node: localNode}
			}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	owners, err := c.Owners(ctx)
	if err != nil {
		return err
	}
	for i := range rows {
		if o, ok := owners[rows[i].ID]; ok {
			rows[i].Owner = &OwnerView{Node: o.Node, Addr: o.Addr, Epoch: o.Epoch}
		}
	}
	return nil
}
