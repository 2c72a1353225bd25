package hub

import (
	"context"
	"fmt"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The turn timer (table setting turn_timeout_s; 0 turns it off) keeps a
// tactical fight from stalling: when the PC whose turn it is has not acted
// in time, the turn resolves with a safe default (defend) and a `system`
// event. A disconnected player keeps the seat; only the turn passes. An
// action the DM gave up on (failed its attempts) does not stop the timer:
// when it fires, that action is abandoned with the turn.

// timerKey identifies one PC turn: the timer fires only if that very turn
// is still waiting.
func timerKey(st *engine.State) string {
	cb := st.Game.Combat
	if cb == nil {
		return ""
	}
	return fmt.Sprintf("%s/%d/%d/%s", cb.ID, cb.Round, cb.Index, cb.Current().Entry)
}

// turnTimer is the armed turn timer of a table, if any.
type turnTimer struct {
	alarm *alarm
	// key is the PC turn it waits on (timerKey); deadline, when it fires.
	key      string
	deadline time.Time
}

// waitingPC returns the seat whose tactical turn is waiting for its
// player, or "".
func (t *table) waitingPC() string { return waitingSeat(t.st, t.meta.Config.CombatMode) }

func (t *table) turnTimeout() time.Duration {
	return time.Duration(t.meta.Config.TurnTimeoutS) * time.Second
}

// armTimer (re)starts the timer when a PC's turn begins waiting, and stops
// it otherwise. Called on the table goroutine after every change.
func (t *table) armTimer() {
	key := ""
	if seat := t.waitingPC(); seat != "" && t.turnTimeout() > 0 && t.job == nil && !t.acts.waitsOn(seat) && !t.paused && !t.closed {
		key = timerKey(t.st)
	}
	if key == t.timer.key {
		return
	}
	t.timer.alarm.Stop()
	t.timer = turnTimer{key: key}
	if key == "" {
		return
	}
	t.timer.deadline = t.h.cfg.Now().Add(t.turnTimeout())
	t.timer.alarm = t.h.after(t.turnTimeout(), func() { t.postSystem(func() { t.timeout(key) }) })
}

// timeout resolves a PC turn its player let lapse: the character defends.
func (t *table) timeout(key string) {
	if key != t.timer.key || key != timerKey(t.st) || t.job != nil {
		return
	}
	t.timer.key, t.timer.alarm = "", nil
	seat := t.waitingPC()
	if seat == "" || t.acts.waitsOn(seat) {
		return
	}
	stale := t.acts.ofSeat(seat) // the turn's actions the DM gave up on
	next := t.st.Clone()
	d, err := engine.RestoreDice(next.RNG)
	if err != nil {
		t.log.Error("turn timeout: dice", "err", err)
		return
	}
	cur := next.Game.Combat.Current()
	var evs []engine.Event
	var abandon []string
	for _, a := range stale {
		evs = append(evs, abandonedEvent(a, "the turn passed"))
		abandon = append(abandon, a.ID)
	}
	evs = append(evs, engine.SystemEvent("turn_timeout",
		fmt.Sprintf("%s did not act within %ds and takes a defensive stance.", cur.Name, t.meta.Config.TurnTimeoutS)))
	dev, err := next.Defend(string(cur.Entry))
	if err != nil {
		t.log.Error("turn timeout: defend", "err", err)
		return
	}
	evs = append(evs, dev...)
	_, aev := next.AdvanceTurn(d)
	evs = append(evs, engine.DiceEvents(d)...)
	evs = append(evs, aev...)
	evs = append(evs, turnEvent(next))
	next.RNG = d.State()
	next.Game.Turn++
	t.stampDeadlines(evs)
	if err := t.commit(context.Background(), store.Commit{State: next, Events: evs, Abandon: abandon}, engine.TurnLabel(next.Game.Turn)); err != nil {
		t.log.Error("turn timeout: commit", "err", err)
		return
	}
	t.setState(next)
	for _, id := range abandon {
		t.acts.close(id, store.ActionAbandoned)
	}
	t.log.Info("turn timed out", "entry", cur.Entry)
	t.updateSummary()
	t.maybeStart()
}

// stampDeadlines replaces each `turn` event of evs (not yet numbered) that
// starts a PC's tactical turn with one that carries the timer's deadline.
func (t *table) stampDeadlines(evs []engine.Event) {
	if t.turnTimeout() <= 0 || t.meta.Config.CombatMode != engine.CombatTactical {
		return
	}
	deadline := t.h.cfg.Now().Add(t.turnTimeout()).UTC().Format(time.RFC3339)
	for i, e := range evs {
		if td, ok := e.Data.(engine.TurnData); ok && td.StartsPCTurn() {
			evs[i] = engine.DeadlineTurnEvent(td, deadline)
		}
	}
}
