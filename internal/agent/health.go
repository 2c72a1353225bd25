package agent

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// HealthWindow is the span of a model's recent error rate.
const HealthWindow = 5 * time.Minute

// Model states in ModelHealth.State.
const (
	ModelOK      = "ok"      // its last call answered
	ModelFailing = "failing" // its last call failed
	ModelUnknown = "unknown" // no call since the server started
)

// ModelHealth says whether a model answers: its last success, its last
// error and that error's kind (ErrorKind), and its calls and errors over
// the last HealthWindow. Times are UTC; the error text is for the
// operator only.
type ModelHealth struct {
	Model         string     `json:"model"`
	State         string     `json:"state"`
	LastSuccessAt *time.Time `json:"last_success_at,omitempty"`
	LastErrorAt   *time.Time `json:"last_error_at,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	LastErrorKind string     `json:"last_error_kind,omitempty"`
	Calls5m       int        `json:"calls_5m"`
	Errors5m      int        `json:"errors_5m"`
	// ErrorRate5m is Errors5m / Calls5m, 0 without calls.
	ErrorRate5m float64 `json:"error_rate_5m"`
}

// healthSlots is how many one-second buckets cover HealthWindow.
const healthSlots = int(HealthWindow / time.Second)

// maxHealthError bounds the error text kept per model.
const maxHealthError = 500

// Health tracks whether each model answers, in memory, from the calls as
// they finish (Logged feeds it): the call log is written behind a queue
// that may drop, and the operator asks about now. It forgets nothing but
// what is older than HealthWindow, and holds a fixed few kilobytes per
// model. The zero value is ready; it is safe for concurrent use.
type Health struct {
	mu     sync.Mutex
	models map[string]*modelHealth
}

type modelHealth struct {
	lastOK, lastErr time.Time
	err, kind       string
	slots           [healthSlots]healthSlot
}

// healthSlot counts the calls that finished in one second.
type healthSlot struct {
	sec           int64
	calls, errors int
}

// Watch lists model before its first call, as unknown.
func (h *Health) Watch(model string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.model(model)
}

// Record counts a call of model that finished at at; err is its error,
// nil for a success.
func (h *Health) Record(model string, at time.Time, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.model(model)
	sec := at.Unix()
	// Times before 1970 (a test's zero clock) index from the end.
	i := int(sec % int64(healthSlots))
	if i < 0 {
		i += healthSlots
	}
	s := &m.slots[i]
	if s.sec != sec {
		*s = healthSlot{sec: sec}
	}
	s.calls++
	if err == nil {
		if at.After(m.lastOK) {
			m.lastOK = at
		}
		return
	}
	s.errors++
	if at.After(m.lastErr) {
		m.lastErr, m.kind = at, ErrorKind(err)
		m.err = err.Error()
		if len(m.err) > maxHealthError {
			m.err = strings.ToValidUTF8(m.err[:maxHealthError], "") + "…"
		}
	}
}

// model returns model's record, made on first use. h.mu is held.
func (h *Health) model(model string) *modelHealth {
	if h.models == nil {
		h.models = map[string]*modelHealth{}
	}
	m, ok := h.models[model]
	if !ok {
		m = &modelHealth{}
		h.models[model] = m
	}
	return m
}

// Models returns every model watched or called, by name, as of now. The
// slice is the caller's.
func (h *Health) Models(now time.Time) []ModelHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ModelHealth, 0, len(h.models))
	from := now.Unix() - int64(healthSlots)
	for name, m := range h.models {
		v := ModelHealth{Model: name, State: ModelUnknown}
		if !m.lastOK.IsZero() {
			t := m.lastOK.UTC()
			v.LastSuccessAt, v.State = &t, ModelOK
		}
		if !m.lastErr.IsZero() {
			t := m.lastErr.UTC()
			v.LastErrorAt, v.LastError, v.LastErrorKind = &t, m.err, m.kind
			if m.lastErr.After(m.lastOK) {
				v.State = ModelFailing
			}
		}
		for _, s := range m.slots {
			if s.sec > from && s.sec <= now.Unix() {
				v.Calls5m += s.calls
				v.Errors5m += s.errors
			}
		}
		if v.Calls5m > 0 {
			v.ErrorRate5m = float64(v.Errors5m) / float64(v.Calls5m)
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b ModelHealth) int { return strings.Compare(a.Model, b.Model) })
	return out
}
