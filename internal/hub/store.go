package hub

import (
	"context"

	"tavern/internal/engine"
)

// Store is the persistence the hub needs. internal/db satisfies it;
// cmd/server wires them. Implementations must be safe for concurrent use.
type Store interface {
	// CreateTable stores a new table, its initial state and first events in
	// one transaction. It returns an engine ECONFLICT error if the id exists.
	CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error
	// Tables lists every stored table, oldest first.
	Tables(ctx context.Context) ([]engine.Table, error)
	// LoadTable returns everything needed to bring a table back: settings,
	// state (catalogue not set), last event seq, seats, unresolved pending
	// actions. ENOTFOUND if there is no such table.
	LoadTable(ctx context.Context, id string) (engine.TableData, error)
	// Commit applies c in ONE transaction. If c.AddPending duplicates an
	// existing (table, player, client id) it returns an engine ECONFLICT
	// error and writes nothing.
	Commit(ctx context.Context, c engine.Commit) error
	// Events returns up to limit events with seq > since, in order.
	Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error)
	// History returns the last n messages of an agent's history at a table,
	// oldest first, never starting in the middle of a turn.
	History(ctx context.Context, tableID, agent string, n int) ([]engine.AgentMessage, error)
}
