package hub

import "time"

// Tables load lazily (Hub.get) and an idle table is evicted: once nothing
// has used it for Config.EvictAfter — no get (request, socket,
// operator), no commit — and it has no socket, no subscriber, no open
// action, no running turn, no turn timer armed and no backoff waiting, it
// leaves the hub's map, its goroutine ends and the store forgets the state
// it kept for it. A fight waiting on a PC with a turn timer is never
// evicted: the timer keeps it loaded, and a restart loads every table in a
// fight (Start), which arms the timer again.

// touch marks the table used now.
func (t *table) touch() { t.lastUse.Store(t.h.cfg.Now().UnixNano()) }

// evictLoop looks for idle tables every EvictAfter/4 (at most a minute)
// until the hub closes.
func (h *Hub) evictLoop() {
	every := min(h.cfg.EvictAfter/4, time.Minute)
	tick := time.NewTicker(max(every, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
			h.evictIdle()
		}
	}
}

// evictIdle asks every table unused for EvictAfter to evict itself if it
// is idle; it does not wait for their answers.
func (h *Hub) evictIdle() {
	cutoff := h.cfg.Now().Add(-h.cfg.EvictAfter).UnixNano()
	h.mu.RLock()
	var old []*table
	for _, t := range h.tables {
		if t.lastUse.Load() <= cutoff {
			old = append(old, t)
		}
	}
	h.mu.RUnlock()
	for _, t := range old {
		t.tryPost(t.evict)
	}
}

// unused reports whether nothing keeps the table loaded. On the table
// goroutine.
func (t *table) unused() bool {
	return len(t.clients) == 0 && len(t.subs) == 0 && len(t.acts.open) == 0 && t.job == nil && len(t.flight.queue) == 0 &&
		t.timer.alarm == nil && !t.acts.held(t.h.cfg.Now()) && len(t.players) == 0 && len(t.system) == 0
}

// evict removes the table from the hub if it is idle and still unused;
// the check of lastUse is made under the hub's write lock, which every get
// takes for reading as it touches the table, so no get hands the table out
// once it is gone from the map. On the table goroutine, which then ends.
func (t *table) evict() {
	if t.evicted || !t.unused() {
		return
	}
	cutoff := t.h.cfg.Now().Add(-t.h.cfg.EvictAfter).UnixNano()
	h := t.h
	h.mu.Lock()
	if t.lastUse.Load() > cutoff || h.tables[t.id] != t {
		h.mu.Unlock()
		return
	}
	delete(h.tables, t.id)
	h.mu.Unlock()
	t.unloaded()
	t.log.Info("table evicted", "idle_for", h.cfg.EvictAfter)
}

// unloaded marks the table gone from the hub's map (the loop then ends)
// and tells the store it may drop what it keeps of the table.
func (t *table) unloaded() {
	t.evicted = true
	if f, ok := t.h.cfg.Store.(interface{ Forget(string) }); ok {
		f.Forget(t.id)
	}
}
