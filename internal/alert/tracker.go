package alert

import (
	"sort"
	"sync"
	"time"
)

// Record is one alert of the history: raised at Since, cleared at
// Cleared (nil while it fires).
type Record struct {
	Alert
	Cleared *time.Time `json:"cleared,omitempty"`
}

// historyLen bounds the history the Tracker keeps.
const historyLen = 200

// Tracker remembers the firing alerts across evaluations (an alert keeps
// the time it was first raised, its summary the latest) and the history
// of raised and cleared ones, newest first. Safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	active  map[string]*Record
	history []*Record // oldest first
	at      time.Time // the last Update
}

// Update takes one evaluation's alerts at now: new ones are raised, those
// no longer firing are cleared. It returns the alerts it raised (Since is
// now) and the ids of those it cleared, for a store to keep.
func (t *Tracker) Update(firing []Alert, now time.Time) (raised []Alert, cleared []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active == nil {
		t.active = map[string]*Record{}
	}
	t.at = now
	seen := make(map[string]bool, len(firing))
	for _, a := range firing {
		seen[a.ID] = true
		if r, ok := t.active[a.ID]; ok {
			r.Summary, r.Severity, r.Value = a.Summary, a.Severity, a.Value
			continue
		}
		r := &Record{Alert: a}
		r.Since = now
		raised = append(raised, r.Alert)
		t.active[a.ID] = r
		t.history = append(t.history, r)
		if len(t.history) > historyLen {
			t.history = t.history[len(t.history)-historyLen:]
		}
	}
	for id, r := range t.active {
		if !seen[id] {
			c := now
			r.Cleared = &c
			delete(t.active, id)
			cleared = append(cleared, id)
		}
	}
	sort.Strings(cleared)
	return raised, cleared
}

// Restore starts the tracker from a stored history h, newest first (as
// History returns it): the alerts not cleared fire again until the next
// Update says otherwise. Call it before the first Update.
func (t *Tracker) Restore(h []Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active = map[string]*Record{}
	t.history = t.history[:0]
	for i := min(len(h), historyLen) - 1; i >= 0; i-- {
		r := h[i]
		t.history = append(t.history, &r)
		if r.Cleared == nil {
			t.active[r.ID] = &r
		}
	}
}

// Active returns the firing alerts, oldest first.
func (t *Tracker) Active() []Alert {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Alert
	for _, r := range t.history {
		if r.Cleared == nil {
			if _, ok := t.active[r.ID]; ok {
				out = append(out, r.Alert)
			}
		}
	}
	return out
}

// History returns the alerts raised, newest first, at most n (<= 0: all
// kept).
func (t *Tracker) History(n int) []Record {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n <= 0 || n > len(t.history) {
		n = len(t.history)
	}
	out := make([]Record, 0, n)
	for i := len(t.history) - 1; i >= 0 && len(out) < n; i-- {
		r := *t.history[i]
		if r.Cleared != nil {
			c := *r.Cleared
			r.Cleared = &c
		}
		out = append(out, r)
	}
	return out
}

// Evaluated returns when Update last ran (zero: never).
func (t *Tracker) Evaluated() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.at
}
