package pgdb

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Moderated returns the players the operator shut out: banned ones, by
// id, with the ban's reason, and erased ones. The operator acts on one
// node; every node reads this every few seconds to close those players'
// sockets it serves (players_moderated keeps it off the whole table).
func (d *DB) Moderated(ctx context.Context) (banned map[string]string, erased map[string]bool, err error) {
	banned, erased = map[string]string{}, map[string]bool{}
	err = each(ctx, d.pool, `SELECT id, ban_reason, banned_at IS NOT NULL, erased_at IS NOT NULL FROM players
		WHERE banned_at IS NOT NULL OR erased_at IS NOT NULL`, nil, func(r pgx.Rows) error {
		var id, reason string
		var isBanned, isErased bool
		if err := r.Scan(&id, &reason, &isBanned, &isErased); err != nil {
			return err
		}
		if isErased {
			erased[id] = true
		} else if isBanned {
			banned[id] = reason
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("moderated players: %w", err)
	}
	return banned, erased, nil
}

// fenceErased raises, in tx, the epoch of every table player id sits at,
// plays at, owns or chatted at that another node runs: that node's next commit is
// then fenced (its state in memory still holds the player's name and
// backstory) and the table reloads from the rows the erasure scrubbed.
// This node's own tables were scrubbed in memory first (hub.ErasePlayer).
func (d *DB) fenceErased(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `UPDATE table_owners SET epoch = epoch + 1 WHERE node_id IS DISTINCT FROM $2 AND table_id IN (
		SELECT table_id FROM seats WHERE player_id = $1
		UNION SELECT table_id FROM characters WHERE player_id = $1
		UNION SELECT id FROM tables WHERE owner_id = $1
		UNION SELECT table_id FROM events WHERE kind = 'chat' AND data::jsonb ->> 'player_id' = $1)`, id, d.NodeID())
	return err
}
