package hub

import (
	"sync"
	"time"
)

// Every goroutine the hub starts is the hub's: it is started by spawn (or
// entered by a timer's call, ring), counted in h.wg, and ends when h.ctx
// does, so Close returns only once none is left (STYLE.md "Whoever starts a
// goroutine stops it"). A timer (after) is no goroutine while it waits: it
// is a call scheduled on the hub's clock (Config.AfterFunc), which becomes
// one of the hub's goroutines when it fires. A goroutine sleeping per timer
// was churn a CPU profile showed.

// spawn runs f on a new goroutine that Close waits for. Once Close has
// cancelled the hub's context and begun waiting it starts nothing and
// reports false: a goroutine started then could outlive Close (and a
// WaitGroup must not grow from zero during Wait).
func (h *Hub) spawn(f func()) bool {
	if !h.enter() {
		return false
	}
	go func() {
		defer h.wg.Done()
		f()
	}()
	return true
}

// enter counts the calling goroutine as one of the hub's, so Close waits
// for it; the caller must call h.wg.Done when it ends. It reports false,
// counting nothing, once Close waits.
func (h *Hub) enter() bool {
	h.spawnMu.Lock()
	defer h.spawnMu.Unlock()
	if h.stopping {
		return false
	}
	h.wg.Add(1)
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
	mu sync.Mutex
	// done is set by the first of Stop and the call starting: whichever
	// comes second finds it and does nothing.
	done  bool
	timer Timer
}

// Stop cancels the call: once Stop returns, the call does not start (it
// may have started before). Safe to call twice and on a nil alarm.
func (a *alarm) Stop() {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.done = true
	timer := a.timer
	a.mu.Unlock()
	if timer != nil {
		timer.Stop() // frees the clock's timer now, not when it would fire
	}
}

// claim reports whether the call may start, and if so marks it started:
// true once at most, and never after Stop.
func (a *alarm) claim() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return false
	}
	a.done = true
	return true
}

// after calls f as one of the hub's goroutines once d has passed on the
// hub's clock, unless the alarm is stopped first or the hub is closing:
// f never starts once Close has cancelled the hub's context, and Close
// waits for an f that started before. The clock starts now. Nothing runs
// while the alarm waits. An f that started just before Stop still runs, so
// what f posts must check that its work is still due (the turn timer
// compares its key, maybeStart is idempotent).
func (h *Hub) after(d time.Duration, f func()) *alarm {
	a := &alarm{}
	timer := h.cfg.AfterFunc(d, func() { h.ring(a, f) })
	a.mu.Lock()
	a.timer = timer
	a.mu.Unlock()
	return a
}

// ring is an alarm's call when its time comes, on the clock's goroutine.
func (h *Hub) ring(a *alarm, f func()) {
	if !h.enter() {
		return
	}
	defer h.wg.Done()
	if h.ctx.Err() != nil || !a.claim() {
		return
	}
	f()
}
