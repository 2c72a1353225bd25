package hub

import (
	"context"
	"path/filepath"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// testHub starts a hub that plays with the offline narrator on a fresh
// SQLite file; both close when the test ends. tune adjusts the config
// before the hub is made.
func testHub(tb testing.TB, tune func(*Config)) (*Hub, *db.DB) {
	tb.Helper()
	ctx := context.Background()
	st, err := db.Open(ctx, filepath.Join(tb.TempDir(), "tavern.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	lib, err := adventures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := Config{Store: st, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}, Memory: st}, Seed: func() uint64 { return 7 }}
	if tune != nil {
		tune(&cfg)
	}
	h := New(cfg)
	if err := h.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close() })
	return h, st
}

// publishNow publishes evs (numbered by the caller) as a settled commit
// would. On the table goroutine.
func (t *table) publishNow(tb testing.TB, evs []engine.Event) {
	data, err := eventData(evs)
	if err != nil {
		tb.Error(err)
		return
	}
	t.publish(evs, data)
	t.pushHeld()
}
