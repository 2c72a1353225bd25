package pgdb

import (
	"tavern/internal/store"

	"context"
)

// node is this process's membership of the cluster (Join).
type node struct{}

// fence queues, first in t, the owner check of the tables of batch and
// lives, and returns the epoch this node holds each under (0 when the DB
// is not a cluster node: no check).
func (d *DB) fence(t *btx, batch []*commitReq, lives []store.Commit) map[string]int64 {
	return nil
}

// fenced is told that a commit of table id was fenced.
func (d *DB) fenced(id string) {}

// release gives up table id, if this node holds it.
func (d *DB) release(id string) {}

// leave releases every table and removes this node's row.
func (d *DB) leave(ctx context.Context, n *node) error { return nil }

// claimNew queues, in the transaction that creates table id, its owner
// row for this node, and returns the epoch (0 when not a cluster node).
func (d *DB) claimNew(t *btx, id string) int64 { return 0 }
