package hub

import (
	"context"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// deadlined is the hub's view of its Store: every call gets storeTimeout
// on top of the caller's ctx, since no store call may go without a
// deadline. New wraps Config.Store in it, so no call site can forget.
type deadlined struct{ s Store }

var _ Store = deadlined{}

func (d deadlined) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, storeTimeout)
}

func (d deadlined) CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.CreateTable(ctx, t, st, evs)
}

func (d deadlined) Tables(ctx context.Context) ([]engine.Table, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Tables(ctx)
}

func (d deadlined) TableInfos(ctx context.Context) ([]store.TableInfo, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TableInfos(ctx)
}

func (d deadlined) TableProgress(ctx context.Context) (map[string]store.TableProgress, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TableProgress(ctx)
}

// Forget tells the store a table was evicted, if it keeps anything of
// the table's (internal/db keeps the state it wrote last).
func (d deadlined) Forget(tableID string) {
	if f, ok := d.s.(interface{ Forget(string) }); ok {
		f.Forget(tableID)
	}
}

func (d deadlined) LoadTable(ctx context.Context, id string) (store.TableData, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.LoadTable(ctx, id)
}

func (d deadlined) Commit(ctx context.Context, c store.Commit) error {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Commit(ctx, c)
}

// Enqueue bounds the wait for a place in the store's queue; the commit
// itself is then the store's to finish.
func (d deadlined) Enqueue(ctx context.Context, c store.Commit, done func(error)) error {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Enqueue(ctx, c, done)
}

func (d deadlined) Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Events(ctx, tableID, since, limit)
}

func (d deadlined) SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.SearchMemories(ctx, tableID, query, limit)
}

func (d deadlined) MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.MemorySession(ctx, tableID, id)
}

func (d deadlined) ActiveHistory(ctx context.Context, tableID, agentName string, limit int) ([]store.AgentMessage, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.ActiveHistory(ctx, tableID, agentName, limit)
}

func (d deadlined) AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.AllHistory(ctx, tableID, agentName)
}

func (d deadlined) UpdateMemory(ctx context.Context, m store.Memory) error {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.UpdateMemory(ctx, m)
}

func (d deadlined) Memories(ctx context.Context, tableID, agentName string, limit int) ([]store.Memory, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Memories(ctx, tableID, agentName, limit)
}

func (d deadlined) Calls(ctx context.Context, tableID string, limit int) ([]store.LLMCall, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.Calls(ctx, tableID, limit)
}

// QueueActionState only queues: it never waits, so it needs no deadline.
func (d deadlined) QueueActionState(tableID string, a store.ActionLife) {
	d.s.QueueActionState(tableID, a)
}

func (d deadlined) ActionStates(ctx context.Context, tableID string) (map[string]store.ActionLife, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.ActionStates(ctx, tableID)
}

func (d deadlined) TableFlags(ctx context.Context) (map[string]store.TableFlags, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TableFlags(ctx)
}

func (d deadlined) CallsSince(ctx context.Context, since time.Time, tableID string, limit int) ([]store.LLMCall, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.CallsSince(ctx, since, tableID, limit)
}

func (d deadlined) TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TurnTimes(ctx, since)
}

func (d deadlined) ActionByClientID(ctx context.Context, tableID, playerID, clientID string) (store.ActionLife, bool, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.ActionByClientID(ctx, tableID, playerID, clientID)
}
