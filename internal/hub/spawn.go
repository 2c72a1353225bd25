package hub

import (
	"sync"
	"time"
)

// Every goroutine the hub starts is the hub's: it is started by spawn,
// counted in h.wg, and ends when h.ctx does, so Close returns only once
// none is left (STYLE.md "Whoever starts a goroutine stops it"). Timers
// are such goroutines too (after), on the hub's clock.

// spawn runs f on a new goroutine that Close waits for. Once Close has
// cancelled the hub's context and begun waiting it starts nothing and
// reports false: a goroutine started then could outlive Close (and a
// WaitGroup must not grow from zero during Wait).
func (h *Hub) spawn(f func()) bool {
	h.spawnMu.Lock()
	defer h.spawnMu.Unlock()
	if h.stopping {
		return false
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// stopSpawning makes spawn refuse from now on; Close calls it after
// cancelling the hub's context and before waiting.
func (h *Hub) stopSpawning() {
	h.spawnMu.Lock()
	h.stopping = true
	h.spawnMu.Unlock()
}

// alarm is a call that after scheduled. Its methods are safe for
// concurrent use.
type alarm struct {
	once    sync.Once
	stopped chan struct{}
}

// Stop cancels the call if it has not started yet. Safe to call twice and
// on a nil alarm.
func (a *alarm) Stop() {
	if a != nil {
		a.once.Do(func() { close(a.stopped) })
	}
}

// after calls f on a goroutine of the hub's (spawn) once d has passed on
// the hub's clock, unless the alarm is stopped before or the hub closes
// first. The clock starts now, not when the goroutine first runs. A call
// that fires as Stop is called may still run: f must check that its work is
// still due (the turn timer compares its key, maybeStart is idempotent).
func (h *Hub) after(d time.Duration, f func()) *alarm {
	a := &alarm{stopped: make(chan struct{})}
	fire := h.cfg.After(d)
	h.spawn(func() {
		select {
		case <-fire:
			select {
			case <-a.stopped: // stopped before the clock fired: both were ready
				return
			default:
			}
			f()
		case <-a.stopped:
		case <-h.ctx.Done():
		}
	})
	return a
}
