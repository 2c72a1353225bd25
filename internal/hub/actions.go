package hub

import (
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// maxAttempts is how many times a player's action is tried before the DM
// gives up on it and it waits for its player (or the turn timer).
const maxAttempts = 3

const (
	// dmMaxFailures is how many times in a row a DM turn of a fight may
	// fail before the fight ends with error_abort.
	dmMaxFailures = 5
	// dmBackoffMax caps the wait before a failed DM turn is retried.
	dmBackoffMax = 30 * time.Second
)

// actions is a table's action lifecycle: the open actions (admitted,
// started, failed), the attempts each took, the backoff after a failure,
// how the last closed ones ended, and the DM's failed turns. It holds no
// I/O: the table queues the lives it returns with the store and arms the
// alarms. Owned by the table goroutine; not safe for concurrent use.
type actions struct {
	// open are the actions waiting to be played or playing, oldest first.
	open []engine.PendingAction
	// attempts counts the failed attempts of each open action, by id.
	attempts map[string]int
	// life is where each open action is in its life, by id (the
	// operator's view; the store keeps a copy).
	life map[string]*store.ActionLife
	// dmFailures counts the failed DM turns in a row, by turn kind.
	dmFailures map[string]int
	// discard holds actions abandoned while their turn ran: that turn's
	// result is dropped, never applied.
	discard map[string]bool
	// recent are the last closed actions of each player, newest first, by
	// player id: a resent act is answered from them.
	recent map[string][]store.ClosedAct
	// hold delays the next turn after a failure (backoff); holdGen tells
	// the latest hold's alarm from older ones.
	hold    time.Time
	holdGen int
}

// newActions is the lifecycle of a table loaded with open actions and
// its players' recently closed ones.
func newActions(open []engine.PendingAction, recent []store.ClosedAct) *actions {
	a := &actions{open: open, attempts: map[string]int{}, life: map[string]*store.ActionLife{},
		dmFailures: map[string]int{}, discard: map[string]bool{}, recent: map[string][]store.ClosedAct{}}
	for _, c := range recent {
		a.recent[c.PlayerID] = append(a.recent[c.PlayerID], c)
	}
	for _, p := range open {
		a.life[p.ID] = &store.ActionLife{ActionID: p.ID, State: store.ActionPending}
	}
	return a
}

// admit adds a player's act, durable or on its way to the store.
func (a *actions) admit(p engine.PendingAction) {
	a.open = append(a.open, p)
	a.life[p.ID] = &store.ActionLife{ActionID: p.ID, State: store.ActionPending}
}

// admitStart adds a session start. It gets a life once it starts: the
// operator's view of it has no seat or text until then.
func (a *actions) admitStart(p engine.PendingAction) { a.open = append(a.open, p) }

// find returns the open action id.
func (a *actions) find(id string) (engine.PendingAction, bool) {
	for _, p := range a.open {
		if p.ID == id {
			return p, true
		}
	}
	return engine.PendingAction{}, false
}

// sent returns the open action the player sent under clientID.
func (a *actions) sent(playerID, clientID string) (engine.PendingAction, bool) {
	for _, p := range a.open {
		if p.PlayerID == playerID && p.ClientID == clientID {
			return p, true
		}
	}
	return engine.PendingAction{}, false
}

// admission is what the lifecycle says of a player's act.
type admission int

const (
	// admitNew: a new act, to admit.
	admitNew admission = iota
	// admitReplace: a new act that replaces the player's act the DM gave
	// up on (verdict.open), abandoned in the same commit.
	admitReplace
	// admitResent: the same act again, still open (verdict.open); it is
	// not admitted twice.
	admitResent
	// admitClosed: the same act again, already closed (verdict.closed).
	admitClosed
	// admitBusy: the player's previous act still waits to be resolved.
	admitBusy
)

// verdict is check's answer.
type verdict struct {
	admission
	open   engine.PendingAction
	closed store.ClosedAct
}

// check tells what to do with the act the player sent under clientID: a
// player has one act open at a time (a session start, the DM's to play,
// takes no slot), and a resent act is answered as the one it repeats.
func (a *actions) check(playerID, clientID string) verdict {
	if p, ok := a.sent(playerID, clientID); ok {
		return verdict{admission: admitResent, open: p}
	}
	if c, ok := a.recentAct(playerID, clientID); ok {
		return verdict{admission: admitClosed, closed: c}
	}
	v := verdict{admission: admitNew}
	for _, p := range a.open {
		if p.PlayerID == playerID && p.Kind != engine.ActionStart {
			if !a.gaveUp(p.ID) {
				return verdict{admission: admitBusy, open: p}
			}
			v = verdict{admission: admitReplace, open: p}
		}
	}
	return v
}

// resend handles the act id sent again: one the DM gave up on is tried
// once more, and its life (pending again) returned for the store.
func (a *actions) resend(id string) (store.ActionLife, bool) {
	if !a.gaveUp(id) {
		return store.ActionLife{}, false
	}
	a.retry(id)
	return a.setLife(id, store.ActionPending, ""), true
}

// startOf returns the open session start of character charID.
func (a *actions) startOf(charID string) (engine.PendingAction, bool) {
	for _, p := range a.open {
		if p.Kind == engine.ActionStart && p.CharacterID == charID {
			return p, true
		}
	}
	return engine.PendingAction{}, false
}

// ofPlayer lists the ids of the player's open actions but except.
func (a *actions) ofPlayer(playerID, except string) []string {
	var ids []string
	for _, p := range a.open {
		if p.PlayerID == playerID && p.ID != except {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// ofSeat lists the seat's open acts (session starts left out).
func (a *actions) ofSeat(seat string) []engine.PendingAction {
	var out []engine.PendingAction
	for _, p := range a.open {
		if p.Seat == seat && p.Kind != engine.ActionStart {
			out = append(out, p)
		}
	}
	return out
}

// waitsOn reports whether the seat has an act still to be played or
// retried: not one the DM gave up on, nor a session start (which waits
// for the fight to end).
func (a *actions) waitsOn(seat string) bool {
	for _, p := range a.ofSeat(seat) {
		if !a.gaveUp(p.ID) {
			return true
		}
	}
	return false
}

// ready reports whether the open action p may be tried now (its attempts
// are not spent).
func (a *actions) ready(p engine.PendingAction) bool { return a.attempts[p.ID] < maxAttempts }

// gaveUp reports whether the DM gave up on the open action id after its
// attempts: it waits for its player (or the turn timer).
func (a *actions) gaveUp(id string) bool { return a.attempts[id] >= maxAttempts }

// setLife moves open action id to state (and errText, if any) and returns
// its life, for the store.
func (a *actions) setLife(id, state, errText string) store.ActionLife {
	l := a.life[id]
	if l == nil {
		l = &store.ActionLife{ActionID: id}
		a.life[id] = l
	}
	l.State = state
	if errText != "" {
		l.Error = errText
	}
	return *l
}

// start marks open action id running and returns its life, for the store.
func (a *actions) start(id string) store.ActionLife { return a.setLife(id, store.ActionRunning, "") }

// retry forgets the attempts of open action id: it is tried again.
func (a *actions) retry(id string) { a.attempts[id] = 0 }

// fail counts a failed attempt of open action id and returns the attempts
// so far, its life (failed, with errText) for the store, and the backoff
// before it is tried again: none once it gave up.
func (a *actions) fail(id, errText string) (n int, life store.ActionLife, backoff time.Duration) {
	a.attempts[id]++
	n = a.attempts[id]
	if l := a.life[id]; l != nil {
		l.Attempts++
	}
	life = a.setLife(id, store.ActionFailed, errText)
	if n < maxAttempts {
		backoff = time.Duration(n*n) * time.Second
	}
	return n, life, backoff
}

// dmFailed counts a failed DM turn of kind and returns the failures of
// that kind in a row and the backoff before it is tried again.
func (a *actions) dmFailed(kind string) (n int, backoff time.Duration) {
	a.dmFailures[kind]++
	n = a.dmFailures[kind]
	return n, dmBackoff(n)
}

// forgetDMFailures resets the count of the DM's failed turns: one
// succeeded, or the fight they belonged to ended.
func (a *actions) forgetDMFailures() { clear(a.dmFailures) }

// dmBackoff is the wait after the n-th failure in a row of a DM turn:
// 1 s, 2 s, 4 s… at most dmBackoffMax.
func dmBackoff(n int) time.Duration {
	if n > 6 {
		return dmBackoffMax
	}
	return min(dmBackoffMax, time.Second<<(n-1))
}

// holdUntil keeps turns from starting until until; it returns the hold's
// generation, which lifts it (lift) unless a later hold replaced it.
func (a *actions) holdUntil(until time.Time) int {
	a.holdGen++
	a.hold = until
	return a.holdGen
}

// liftHold ends the hold of generation gen, unless a later one replaced
// it.
func (a *actions) liftHold(gen int) {
	if gen == a.holdGen {
		a.hold = time.Time{}
	}
}

// lift ends any hold now (the operator's retry, a fight's end).
func (a *actions) lift() {
	a.holdGen++
	a.hold = time.Time{}
}

// held reports whether a backoff keeps turns from starting at now.
func (a *actions) held(now time.Time) bool { return now.Before(a.hold) }

// close forgets open action id, closed by a commit as resolved or
// abandoned (state), and remembers how it ended for a resent act.
func (a *actions) close(id, state string) {
	if p, ok := a.find(id); ok {
		closed := append([]store.ClosedAct{{PlayerID: p.PlayerID, ClientID: p.ClientID, State: state}}, a.recent[p.PlayerID]...)
		a.recent[p.PlayerID] = closed[:min(len(closed), store.RecentActsPerPlayer)]
	}
	a.remove(id)
	delete(a.attempts, id)
	delete(a.life, id)
}

// resolve closes open action id, played.
func (a *actions) resolve(id string) { a.close(id, store.ActionResolved) }

// abandon closes open action id as abandoned. running says its turn is
// being played: that turn's result is to be dropped (discarded).
func (a *actions) abandon(id string, running bool) {
	if running {
		a.discard[id] = true
	}
	a.close(id, store.ActionAbandoned)
}

// discarded reports whether the turn that played id must be dropped, and
// forgets it: it is asked once, when that turn ends.
func (a *actions) discarded(id string) bool {
	if !a.discard[id] {
		return false
	}
	delete(a.discard, id)
	return true
}

// forget drops open actions that left with their player's seat; the
// store marks them abandoned, and they are not remembered as closed.
func (a *actions) forget(ids []string) {
	for _, id := range ids {
		a.remove(id)
		delete(a.attempts, id)
		delete(a.life, id)
	}
}

func (a *actions) remove(id string) {
	a.open = filterPending(a.open, []string{id})
}

// recentAct returns how the player's closed action sent under clientID
// ended, if it is among their last ones.
func (a *actions) recentAct(playerID, clientID string) (store.ClosedAct, bool) {
	for _, c := range a.recent[playerID] {
		if c.ClientID == clientID {
			return c, true
		}
	}
	return store.ClosedAct{}, false
}

// restore brings back the lives the store kept of the open actions after
// a restart. A turn that was running when the server stopped is pending
// again: it will be played once more.
func (a *actions) restore(lives map[string]store.ActionLife) {
	for id, l := range lives {
		if _, ok := a.life[id]; !ok {
			continue
		}
		if l.State == store.ActionRunning {
			l.State = store.ActionPending
		}
		a.life[id] = &l
	}
}

func filterPending(p []engine.PendingAction, drop []string) []engine.PendingAction {
	out := p[:0:0]
outer:
	for _, a := range p {
		for _, d := range drop {
			if a.ID == d {
				continue outer
			}
		}
		out = append(out, a)
	}
	return out
}
