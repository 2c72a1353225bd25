package hub

import (
	"context"
	"errors"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// A table does not wait for its acts, chat lines and turns to be durable:
// it queues each commit with the store (Store.Enqueue) and goes
// on, its fields already holding what the commit will make durable, so the
// next act is checked and the next turn starts while the store writes.
// What clients are told waits for the store: a commit's events are
// published, and the acks it owes sent, when the store answers (settle), in
// the order the commits were queued, which is the order the store applies
// them. So no client ever sees an event or an ack that is not durable, and
// events still come in seq order without gaps.
//
// What the table does meanwhile builds on the commits in flight, so they
// are one chain (store.Commit.Chain): if one fails, the store fails the
// ones behind it unapplied, and the table restarts from what the store
// holds (restart). A commit whose caller waits for it (commit) has
// nothing built on it; its failure is that caller's alone.
//
// Clients see t.shown, the state as of the last published commit, and
// t.seq, the last published seq; t.st and t.numbered run ahead of them by
// the commits in flight.

// flight are a table's commits in flight with the store.
type flight struct {
	// queue are the commits queued and not yet settled, oldest first.
	queue []*inflight
	// answered is signalled as the store answers each.
	answered chan struct{}
	// chain links them (store.Commit.Chain).
	chain uint64
}

// inflight is a commit queued with the store and not yet settled.
type inflight struct {
	c store.Commit
	// st is the table's state once c is applied, shown when c settles.
	st  *engine.State
	res chan error // the store's answer
	// answered: err holds the store's answer (read from res).
	answered bool
	err      error
	// then runs on the table goroutine once c settled, with nil or the
	// error it failed with; nil for a commit whose caller waits.
	then func(error)
	wait bool
	// after run once c and every commit before it settled (afterSettled).
	after []func(error)
}

// queue numbers c's events, queues c with the store and returns at once;
// then runs when it settles. On error c was not queued and then never runs.
func (t *table) queue(ctx context.Context, c store.Commit, turn string, then func(error)) (*inflight, error) {
	c.TableID = t.id
	c.Chain = t.flight.chain
	t.touch()
	t.number(c.Events, turn)
	// Encoded once, for the store's rows and the frames (publish).
	data, err := eventData(c.Events)
	if err != nil {
		t.unnumber(c.Events)
		return nil, err
	}
	c.EventData = data
	pc := &inflight{c: c, st: t.st, res: make(chan error, 1), then: then}
	err = t.h.cfg.Store.Enqueue(ctx, c, func(err error) {
		pc.res <- err
		select {
		case t.flight.answered <- struct{}{}:
		default: // the table is already due to settle
		}
	})
	if err != nil {
		t.unnumber(c.Events)
		return nil, err
	}
	t.flight.queue = append(t.flight.queue, pc)
	return pc, nil
}

// commit writes c (events numbered here) and publishes its events, and
// those of every commit queued before it; it returns once c is durable or
// failed. The caller applies what c changes only if it succeeds.
func (t *table) commit(ctx context.Context, c store.Commit, turn string) error {
	pc, err := t.queue(ctx, c, turn, nil)
	if err != nil {
		return err
	}
	pc.wait = true
	// The store answers every queued commit, in order: once c is answered,
	// so is every commit before it.
	pc.err, pc.answered = <-pc.res, true
	t.settle()
	return pc.err
}

// settle publishes the commits the store has answered, oldest first, up to
// the first one not yet answered; their frames leave together, once all
// are published.
func (t *table) settle() {
	published := false
	defer func() {
		if published {
			t.pushHeld()
		}
	}()
	for len(t.flight.queue) > 0 {
		pc := t.flight.queue[0]
		if !pc.answered {
			select {
			case pc.err = <-pc.res:
				pc.answered = true
			default:
				return
			}
		}
		t.flight.queue[0] = nil
		t.flight.queue = t.flight.queue[1:]
		if pc.err != nil {
			t.commitFailed(pc)
			return
		}
		t.publish(pc.c.Events, pc.c.EventData)
		published = true
		t.shown = pc.st
		if pc.then != nil {
			pc.then(nil)
		}
		for _, f := range pc.after {
			f(nil)
		}
	}
	t.flight.queue = nil // let the array go
}

// afterSettled runs f once every commit queued so far has settled: at
// once if none is in flight, with nil once they are published, or with an
// error if the table restarts first. A command's caller hears back only
// then (call), so no answer rests on what is not yet durable.
func (t *table) afterSettled(f func(error)) {
	if len(t.flight.queue) == 0 {
		f(nil)
		return
	}
	last := t.flight.queue[len(t.flight.queue)-1]
	last.after = append(last.after, f)
}

// setState replaces the table's state after a commit its caller waited
// for: nothing is in flight then, so clients see it too.
func (t *table) setState(st *engine.State) {
	t.st = st
	if len(t.flight.queue) == 0 {
		t.shown = st
	}
}

// commitFailed handles pc, which the store did not apply. If its caller
// waits for it and nothing was built on it, the failure is the caller's
// (the table is as before pc); otherwise the table restarts.
func (t *table) commitFailed(pc *inflight) {
	t.flight.chain = t.h.chains.Add(1)
	if pc.wait && len(t.flight.queue) == 0 && !errors.Is(pc.err, store.ErrChainBroken) {
		t.numbered = t.seq
		return
	}
	t.restart(pc)
}

// errRestarting answers the commits behind a failed one.
var errRestarting = engine.Errorf(engine.EUNAVAILABLE, "The table could not save and is restarting; try again.")

// restart unloads the table after pc failed with commits built on it: its
// fields hold what the store does not. Every commit in flight is answered
// as failed (the store fails them unapplied, store.ErrChainBroken), the
// sockets close with 1012 so clients reconnect, and the table is gone from
// the hub: the next request loads it from the store, as after a crash. A
// turn that was running is lost with it and played again.
func (t *table) restart(pc *inflight) {
	reason := "the table is restarting"
	if errors.Is(pc.err, store.ErrFenced) {
		// A cluster's way of working, not a fault: this node's lease
		// lapsed (it stalled) or another node claimed the table.
		reason = "the table moved to another node"
		t.log.Info("another node runs the table now: it leaves this one", "err", pc.err, "behind", len(t.flight.queue))
	} else {
		t.log.Error("a commit failed; the table restarts from the store", "err", pc.err, "behind", len(t.flight.queue))
	}
	t.h.metrics.tableRestarted()
	if pc.then != nil {
		pc.then(pc.err)
	}
	for _, f := range pc.after {
		f(errRestarting)
	}
	for _, next := range t.flight.queue {
		if next.then != nil {
			next.then(errRestarting)
		}
		for _, f := range next.after {
			f(errRestarting)
		}
	}
	t.flight.queue = nil
	h := t.h
	h.mu.Lock()
	if h.tables[t.id] == t {
		delete(h.tables, t.id)
	}
	h.mu.Unlock()
	for c := range t.clients {
		c.close(websocket.StatusServiceRestart, reason)
	}
	for s := range t.subs {
		close(s.ch)
		delete(t.subs, s)
	}
	t.unloaded() // the loop ends after this command
}

// drain waits for the store's answer to every commit in flight and
// settles them, so each act in flight gets its true answer before the
// table stops.
func (t *table) drain() {
	for _, pc := range t.flight.queue {
		if !pc.answered {
			pc.err, pc.answered = <-pc.res, true
		}
	}
	t.settle()
}
