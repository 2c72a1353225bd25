package pgdb_test

import (
	"sync"
	"testing"
	"time"

	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
)

// TestTakeQuota: two nodes on one database share a key's quota: of
// limit+4 creations taken at once over both, exactly limit are recorded,
// each refusal says how long to wait (within the window); a returned mark
// makes room again, and another key or kind has its own count.
func TestTakeQuota(t *testing.T) {
	url := pgtest.URL(t)
	var nodes [2]*pgdb.DB
	for i := range nodes {
		d, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		nodes[i] = d
	}
	const limit, window = 5, time.Hour
	var mu sync.Mutex
	var ids []int64
	var waits []time.Duration
	var wg sync.WaitGroup
	for i := range limit + 4 {
		wg.Go(func() {
			id, wait, err := nodes[i%2].TakeQuota(ctx, "tables", "192.0.2.7", limit, window)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case id != 0:
				ids = append(ids, id)
			default:
				waits = append(waits, wait)
			}
		})
	}
	wg.Wait()
	if len(ids) != limit || len(waits) != 4 {
		t.Fatalf("%d taken, %d refused, want %d and 4", len(ids), len(waits), limit)
	}
	for _, w := range waits {
		if w <= 0 || w > window {
			t.Errorf("wait %s, want within (0, %s]", w, window)
		}
	}
	if id, _, err := nodes[1].TakeQuota(ctx, "tables", "192.0.2.8", limit, window); err != nil || id == 0 {
		t.Errorf("another address: id %d, %v", id, err)
	}
	if id, _, err := nodes[1].TakeQuota(ctx, "players", "192.0.2.7", limit, window); err != nil || id == 0 {
		t.Errorf("another kind: id %d, %v", id, err)
	}
	if err := nodes[0].ReturnQuota(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if id, _, err := nodes[1].TakeQuota(ctx, "tables", "192.0.2.7", limit, window); err != nil || id == 0 {
		t.Errorf("after a return: id %d, %v", id, err)
	}
	// Past the window, marks count no more.
	if id, _, err := nodes[0].TakeQuota(ctx, "tables", "192.0.2.7", limit, time.Microsecond); err != nil || id == 0 {
		t.Errorf("with every mark past the window: id %d, %v", id, err)
	}
}
