package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// job is one turn running outside the table goroutine.
type job struct {
	// pick is what the job plays (nextTurn); its action is the job's copy.
	pick
	state  *engine.State
	turnNo int
	// started is when the job started: the turn's duration.
	started time.Time
	// archive is the memory the turn archives, made by the job
	// (archiveAfter) and committed with the turn.
	archive *store.Memory
	// owner is what the turn reads of the table's notes and the owner's
	// whispers, and its save point (retcon.go).
	owner jobOwner
	// deltas carries its narration to the clients as it streams.
	deltas *deltaStream
	// slow, if set, tells the table the DM is slow (watchSlow).
	slow *time.Timer
}

func (t *table) maybeStart() {
	defer t.armTimer()
	if t.job != nil || t.evicted || t.paused || t.closed || t.h.ctx.Err() != nil || t.h.closed.Load() {
		return
	}
	p, ok := nextTurn(t.st, t.meta.Config.CombatMode, t.acts, t.h.cfg.Now())
	if !ok || t.waitForStore() || !t.markBusy() {
		return
	}
	j := &job{pick: p}
	j.state = t.st.Clone()
	j.turnNo = t.st.Game.Turn + 1
	j.started = t.h.cfg.Now()
	j.deltas = t.newDeltaStream(engine.TurnLabel(j.turnNo))
	t.watchSlow(j)
	if j.action != nil {
		t.queueLife(t.acts.start(j.action.ID))
	}
	j.owner = t.jobOwner()
	t.job = j
	t.sinceJob = nil
	t.updateSummary()
	if !t.h.spawn(func() {
		res, st, err := t.runJob(j)
		t.postSystem(func() { t.finish(j, res, st, err) })
	}) {
		t.job = nil // closing: the action stays pending for the restart
		t.markIdle()
	}
}

// runJob plays one turn on the job's state copy. It never touches the
// table's fields.
func (t *table) runJob(j *job) (agent.Result, *engine.State, error) {
	ctx, cancel := t.attemptContext(t.h.ctx)
	defer cancel()
	st := j.state
	if err := j.owner.saveBefore(st, j.action); err != nil {
		return agent.Result{}, nil, err
	}
	st.Game.Turn = j.turnNo
	dice, err := engine.RestoreDice(st.RNG)
	if err != nil {
		return agent.Result{}, nil, err
	}
	turn := &agent.Turn{No: j.turnNo, Kind: j.kind, State: st, Dice: dice, Entry: j.entry, Notes: j.owner.notes, Whispers: j.owner.whisperTexts()}
	// Only the fields never changed: the owner may patch others meanwhile.
	if a, ok := t.h.adventureOf(engine.Table{ID: t.id, Adventure: t.meta.Adventure}); ok {
		turn.Adventure = a.Name + "\n" + a.Intro
	}
	if j.action != nil {
		turn.Actor = st.Character(j.action.CharacterID)
		turn.Text = j.action.Text
		turn.ActionID = j.action.ID
		if turn.Actor == nil {
			return agent.Result{}, nil, engine.Errorf(engine.EINVALID, "The acting character has left.")
		}
		if j.action.Kind == engine.ActionStart {
			turn.Kind = agent.TurnStart
			st.Game.Started = append(st.Game.Started, turn.Actor.ID)
		}
		if st.Game.Combat != nil {
			if e, ok := st.Game.Combat.Entry(engine.PCEntry(turn.Actor.Seat)); ok {
				turn.Entry = e
			}
		}
	}
	ctx = agent.WithTable(ctx, t.id) // for the memory tools and the call log
	ctx = agent.WithTurn(ctx, engine.TurnLabel(j.turnNo))
	hist, err := t.historyContext(ctx, turn.AgentName())
	if err != nil {
		return agent.Result{}, nil, fmt.Errorf("load history: %w", err)
	}
	turn.History = hist
	turn.OnDelta = j.deltas.add
	res, err := t.h.cfg.Runner.Run(ctx, turn)
	if err != nil {
		return agent.Result{}, nil, err
	}
	// The engine, not the model, advances the initiative.
	narrativeCombat := st.Config.CombatMode == engine.CombatNarrative
	if st.Game.Combat != nil {
		if res.Output.Tool == "start_combat" {
			if !narrativeCombat {
				res.Events = append(res.Events, turnEvent(st))
			}
		} else {
			var evs []engine.Event
			if st.Config.CombatMode == engine.CombatNarrative && st.Game.Combat.Ending == "" {
				// Narrative combat has no initiative queue: each action is
				// a beat in which effects tick and the end is checked.
				_, evs = st.SettleNarrativeTurn(dice)
			} else {
				_, evs = st.AdvanceTurn(dice)
			}
			res.Events = append(res.Events, evs...)
			if !narrativeCombat || st.Game.Combat.Ending != "" {
				res.Events = append(res.Events, turnEvent(st))
			}
		}
	}
	st.RNG = dice.State()
	j.archive = t.archiveAfter(ctx, res.Agent, j.turnNo, res.Messages)
	return res, st, nil
}

// finish commits a finished job in ONE transaction, then applies and
// broadcasts it; a failed job commits only a system event.
func (t *table) finish(j *job, res agent.Result, st *engine.State, runErr error) {
	t.job = nil
	t.markIdle()
	if j.slow != nil {
		j.slow.Stop()
	}
	ctx := context.Background()
	turnID := engine.TurnLabel(j.turnNo)
	if runErr != nil {
		j.deltas.withdraw()
	}
	if j.action != nil && t.acts.discarded(j.action.ID) {
		j.deltas.withdraw()
		// The operator abandoned the action while it ran: already resolved
		// with a system event; its turn is never applied.
		t.sinceJob = nil
		t.logTurn(j, res, "discarded", runErr)
		t.updateSummary()
		t.maybeStart()
		return
	}
	if runErr == nil {
		for _, f := range t.sinceJob {
			f(st)
		}
		msgs := agentMessages(res.Agent, j.turnNo, res.Messages)
		t.stampDeadlines(res.Events)
		c := store.Commit{State: st, Events: res.Events, Messages: msgs, Archive: j.archive}
		if j.action != nil {
			c.Resolve = []string{j.action.ID}
		}
		c.Owner = t.turnOwner(j)
		// Queued, not waited for: the next turn may start on this one's
		// state while the store writes it (pipeline.go).
		var pc *inflight
		archive := j.archive
		var planned *store.Memory // read now: the store fills archive in once queued
		if archive != nil {
			m := *archive
			planned = &m
		}
		runner := t.h.cfg.Runner
		if pc, runErr = t.queue(ctx, c, turnID, func(err error) {
			if err == nil {
				t.archived(archive)
			} else {
				runner.Told(t.id, res, false)
			}
		}); runErr == nil {
			// Told once queued: the next turn may start before the store
			// writes this one, and must not tell the table again.
			runner.Told(t.id, res, true)
			pc.st = st
			t.st = st
			t.turnQueued(j)
			t.remember(res.Agent, j.turnNo, res.Messages)
			if j.action != nil {
				t.acts.resolve(j.action.ID)
			} else {
				t.acts.forgetDMFailures()
			}
		}
		t.archiving(planned, runErr)
	}
	t.sinceJob = nil
	t.lastTurnAt = t.h.cfg.Now()
	if runErr != nil {
		t.logTurn(j, res, "failed", runErr)
		t.failed(ctx, j, runErr)
	} else {
		t.logTurn(j, res, "ok", nil)
	}
	t.updateSummary()
	t.maybeStart()
}

// agentMessages are a turn's messages as the store keeps them, their
// bodies encoded in a scratch buffer, then copied into one array of
// their exact size.
func agentMessages(agentName string, turnNo int, msgs []agent.Message) []store.AgentMessage {
	scratch := messageScratch.Get().(*[]byte)
	defer messageScratch.Put(scratch)
	buf := (*scratch)[:0]
	ends := make([]int, len(msgs))
	for i := range msgs {
		buf = msgs[i].AppendJSON(buf)
		ends[i] = len(buf)
	}
	*scratch = buf
	bodies := slices.Clone(buf)
	out := make([]store.AgentMessage, len(msgs))
	start := 0
	for i, end := range ends {
		out[i] = store.AgentMessage{Agent: agentName, Turn: turnNo, Body: bodies[start:end:end]}
		start = end
	}
	return out
}

// messageScratch holds the buffers agentMessages encodes in.
var messageScratch = sync.Pool{New: func() any { return new([]byte) }}

// failed handles a turn that could not finish: nothing of it was committed.
// A player's action is retried with backoff, then waits for its player
// (act again: retried; act anew: replaced) or, on a tactical turn, for the
// turn timer. A DM turn is retried with exponential backoff, and after
// dmMaxFailures failures in a row the fight ends with error_abort. The
// table hears of each change of state, not of every attempt.
func (t *table) failed(ctx context.Context, j *job, err error) {
	if t.h.ctx.Err() != nil {
		return // shutting down: the action stays pending for the restart
	}
	if cannotSave(err) {
		t.unsaved(j, err)
		return
	}
	t.lastError = errText(err)
	if j.action == nil {
		t.dmFailed(ctx, j, err)
		return
	}
	a := j.action
	n, life, backoff := t.acts.fail(a.ID, t.lastError)
	t.log.Warn("turn failed", "turn", j.turnNo, "kind", j.kind, "action", a.ID, "attempt", n, "err", err)
	t.queueLife(life)
	var msg string
	switch {
	case n == 1:
		msg = "The DM could not resolve the turn; it will be retried."
	case n >= maxAttempts:
		msg = fmt.Sprintf("The DM is unavailable and gave up on the action after %d attempts. Send it again to retry it, or act anew to replace it.", n)
		if timedOut(err) {
			msg = fmt.Sprintf("The DM did not answer in time and gave up on the action after %d attempts of %s. Send it again to retry it, or act anew to replace it.", n, t.h.cfg.AttemptDeadline.Round(time.Second))
		}
		if t.waitingPC() == a.Seat && t.turnTimeout() > 0 {
			msg += fmt.Sprintf(" If nobody acts within %ds, the turn passes.", t.meta.Config.TurnTimeoutS)
		}
	}
	if msg != "" {
		t.tell(ctx, engine.NewEvent(engine.SystemData{Code: CodeUnavailable, Message: msg, ActionID: a.ID, Attempts: n}), j.turnNo)
	}
	if backoff > 0 {
		t.holdFor(backoff)
	}
}

// dmFailed handles a failed DM turn (bookend, NPC, forced resolution).
func (t *table) dmFailed(ctx context.Context, j *job, err error) {
	n, backoff := t.acts.dmFailed(j.kind)
	t.log.Warn("turn failed", "turn", j.turnNo, "kind", j.kind, "attempt", n, "err", err)
	if n >= dmMaxFailures && t.st.Game.Combat != nil {
		msg := fmt.Sprintf("The DM failed %d times in a row and the fight cannot go on: it ends here.", n)
		lead := engine.NewEvent(engine.SystemData{Code: CodeUnavailable, Message: msg, Outcome: engine.OutcomeErrorAbort})
		aerr := t.abortCombat(ctx, lead, "The fight was cut short: the DM was unavailable.")
		if aerr == nil {
			t.log.Warn("fight aborted", "turn", j.turnNo, "kind", j.kind, "failures", n)
			return
		}
		t.log.Error("abort the fight", "err", aerr)
	}
	if n == 1 {
		t.tell(ctx, engine.NewEvent(engine.SystemData{Code: CodeUnavailable,
			Message: "The DM could not play its turn; it will be retried, waiting longer each time.", Attempts: n}), j.turnNo)
	}
	t.holdFor(backoff)
}

// tell commits one `system` event; a failure is only logged.
func (t *table) tell(ctx context.Context, ev engine.Event, turnNo int) {
	if err := t.commit(ctx, store.Commit{Events: []engine.Event{ev}}, engine.TurnLabel(turnNo)); err != nil {
		t.log.Error("commit system event", "err", err)
	}
}

// holdFor keeps turns from starting for d (the backoff after a failure),
// then tries again. Only the latest hold lifts itself; Retry and EndCombat
// lift it at once (actions.lift).
func (t *table) holdFor(d time.Duration) {
	gen := t.acts.holdUntil(t.h.cfg.Now().Add(d))
	t.h.after(d, func() {
		t.postSystem(func() {
			t.acts.liftHold(gen)
			t.maybeStart()
		})
	})
}

// abortCombat ends the fight with outcome error_abort, whatever its state:
// lead (the operator's audit, or the DM's failure) and combat_ended are
// committed with it; the DM's failed fight turns are forgotten and the
// table plays on in exploration. No turn may be running.
func (t *table) abortCombat(ctx context.Context, lead engine.Event, summary string) error {
	if t.st.Game.Combat == nil {
		return engine.Errorf(engine.EINVALID, "There is no fight to end.")
	}
	next := t.st.Clone()
	next.Game.Combat.Ending = "" // this outcome, whatever the fight's state
	_, evs, err := next.EndCombat(engine.OutcomeErrorAbort, summary)
	if err != nil {
		return err
	}
	c := store.Commit{State: next, Events: append([]engine.Event{lead}, evs...)}
	if err := t.commit(ctx, c, t.turnLabel()); err != nil {
		return fmt.Errorf("end the fight at %s: %w", t.id, err)
	}
	t.setState(next)
	t.acts.forgetDMFailures()
	t.acts.lift()
	t.updateSummary()
	t.maybeStart()
	return nil
}

func turnEvent(st *engine.State) engine.Event {
	cb := st.Game.Combat
	if cb == nil {
		return engine.ModeEvent(st.Game.Mode)
	}
	if cb.Ending != "" {
		return engine.ResolutionTurnEvent(cb.Round, cb.Index, cb.Ending)
	}
	return engine.TurnEvent(cb.Round, cb.Index, entryView(st, cb.Current()))
}
