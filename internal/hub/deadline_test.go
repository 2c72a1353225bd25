package hub

import (
	"context"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// deadlineSpy records whether each call came with a deadline.
type deadlineSpy struct {
	Store
	calls map[string]bool
}

func (s *deadlineSpy) seen(name string, ctx context.Context) {
	_, ok := ctx.Deadline()
	s.calls[name] = ok
}

func (s *deadlineSpy) Commit(ctx context.Context, _ store.Commit) error {
	s.seen("Commit", ctx)
	return nil
}

func (s *deadlineSpy) Events(ctx context.Context, _ string, _ int64, _ int) ([]engine.Event, error) {
	s.seen("Events", ctx)
	return nil, nil
}

func (s *deadlineSpy) ActiveHistory(ctx context.Context, _, _ string, _ int) ([]store.AgentMessage, error) {
	s.seen("ActiveHistory", ctx)
	return nil, nil
}

// The hub's store calls carry a deadline even when the caller's context
// has none: New wraps the store.
func TestStoreCallsHaveDeadlines(t *testing.T) {
	spy := &deadlineSpy{calls: map[string]bool{}}
	h := New(Config{Store: spy})
	ctx := context.Background()
	_ = h.cfg.Store.Commit(ctx, store.Commit{})
	_, _ = h.cfg.Store.Events(ctx, "t", 0, 1)
	_, _ = h.cfg.Store.ActiveHistory(ctx, "t", "narrative", 1)
	for _, name := range []string{"Commit", "Events", "ActiveHistory"} {
		if ok, called := spy.calls[name]; !called || !ok {
			t.Errorf("%s: called %v, with a deadline %v", name, called, ok)
		}
	}
}
