package hub

import (
	"context"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// Store is the persistence the hub needs. internal/db satisfies it;
// cmd/server wires them. Implementations must be safe for concurrent use.
type Store interface {
	// CreateTable stores a new table, its initial state and first events in
	// one transaction. It returns an engine ECONFLICT error if the id exists.
	CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error
	// Tables lists every stored table, oldest first.
	Tables(ctx context.Context) ([]engine.Table, error)
	// TableInfos returns what the lobby needs of every stored table, and
	// which must be loaded at start (open actions, a fight), oldest first,
	// without loading any.
	TableInfos(ctx context.Context) ([]store.TableInfo, error)
	// LoadTable returns everything needed to bring a table back: settings,
	// state (catalogue not set), last event seq, seats, unresolved pending
	// actions. ENOTFOUND if there is no such table.
	LoadTable(ctx context.Context, id string) (store.TableData, error)
	// Commit applies c in ONE transaction. If c.AddPending duplicates an
	// existing (table, player, client id) it returns an engine ECONFLICT
	// error and writes nothing; likewise if c.Archive finds no active
	// message to archive. Once it succeeds, *c.Archive is the memory as
	// stored, with its ID.
	Commit(ctx context.Context, c store.Commit) error
	// Enqueue queues c to be applied as Commit applies it and returns once
	// it is queued (ctx bounds that wait; on error done is never called).
	// done is then called exactly once, from the store's goroutine (or,
	// if the store applies c at once, from the caller's, before Enqueue
	// returns), with what Commit would have returned; it must not block.
	// The commits of one caller are applied in the order queued; see
	// store.Commit.Chain.
	Enqueue(ctx context.Context, c store.Commit, done func(error)) error
	// Events returns up to limit events with seq > since, in order.
	Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error)
	// ActionByClientID returns the life of the action a player sent at a
	// table under a client id, open or closed, and whether there is one.
	ActionByClientID(ctx context.Context, tableID, playerID, clientID string) (store.ActionLife, bool, error)
	MemoryStore
	AdminStore
	OwnerStore
	NotesStore
}

// MemoryStore is the part of the store behind the history window, the
// long-term memory (seed 001) and the exports.
type MemoryStore interface {
	agent.MemoryIndex
	// ActiveHistory returns the messages of an agent's history that are
	// not archived, oldest first: at most the last limit (<= 0: all),
	// never starting in the middle of a turn.
	ActiveHistory(ctx context.Context, tableID, agentName string, limit int) ([]store.AgentMessage, error)
	// AllHistory returns every message of an agent's history, archived or
	// not, oldest first.
	AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error)
	// UpdateMemory replaces a memory's title, summary, keywords and
	// source. ENOTFOUND if the table has no such memory.
	UpdateMemory(ctx context.Context, m store.Memory) error
	// Memories returns the last limit memories of a table (<= 0: all), of
	// one agent or of both when agentName is "", oldest first.
	Memories(ctx context.Context, tableID, agentName string, limit int) ([]store.Memory, error)
	// Calls returns the last limit model calls of a table, newest first.
	Calls(ctx context.Context, tableID string, limit int) ([]store.LLMCall, error)
}
