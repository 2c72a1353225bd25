package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"tavern/internal/store"
)

// ActionByClientID returns the life of the action a player sent at a table
// under clientID (the unique key of pending_actions), open or closed, and
// whether there is one: a client that lost its ack learns whether its
// action was applied (store.ActionResolved), dropped (ActionAbandoned) or
// is still waiting.
func (d *DB) ActionByClientID(ctx context.Context, tableID, playerID, clientID string) (store.ActionLife, bool, error) {
	var a store.ActionLife
	err := d.reader.QueryRowContext(ctx, `SELECT id, state, attempts, last_error FROM pending_actions
		WHERE table_id = ? AND player_id = ? AND client_id = ?`, tableID, playerID, clientID).
		Scan(&a.ActionID, &a.State, &a.Attempts, &a.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ActionLife{}, false, nil
	}
	if err != nil {
		return store.ActionLife{}, false, fmt.Errorf("action %q of %s at %s: %w", clientID, playerID, tableID, err)
	}
	return a, true, nil
}
