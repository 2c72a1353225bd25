package hub

import (
	"context"
	"fmt"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// act handles a player's `act` frame: answer gets the ack status or an
// error code and message, on the table goroutine, once the action is
// durable (pipeline.go) or at once when no commit is needed.
//
// Its answers are true. The same act sent again is acked again, also once
// it was applied (answerRetry), and the one the DM gave up on is played
// again. A new act while the DM has given up on the player's previous one
// replaces it: that one is abandoned, in the same commit, with a `system`
// event naming it, and the new one is played.
func (t *table) act(ctx context.Context, c *client, clientID, text string, answer func(status string, err error)) {
	status, commit, err := t.admitAct(c, clientID, text)
	if err != nil || commit == nil {
		// No commit of its own: the answer (a refusal, or the ack of an
		// act sent again) rests on the table's state, which runs ahead of
		// the store by the commits in flight, so it leaves once they
		// settle; if they fail, the table restarts and that is the answer.
		t.afterSettled(func(unsaved error) {
			if unsaved != nil {
				status, err = "", unsaved
			}
			answer(status, err)
		})
		return
	}
	a := *commit.AddPending
	status = "queued"
	if t.job == nil {
		status = "accepted"
	}
	_, err = t.queue(ctx, *commit, engine.TurnLabel(t.st.Game.Turn+1), func(err error) {
		if engine.ErrorCode(err) == engine.ECONFLICT {
			err = refusal{err} // already stored (and maybe played) long ago
		}
		answer(status, err)
	})
	if err != nil {
		answer("", err)
		return
	}
	// The table goes on as if the commit had landed: if it fails, the
	// table restarts (pipeline.go).
	for _, id := range commit.Abandon {
		t.acts.close(id, store.ActionAbandoned)
	}
	t.acts.admit(a)
	t.maybeStart()
}

// admitAct checks a player's act against the table: it returns the commit
// that stores it, or the answer to give without one (a status, or an
// error: a refusal the caller may look up, answerRetry).
func (t *table) admitAct(c *client, clientID, text string) (string, *store.Commit, error) {
	refuse := func(err error) (string, *store.Commit, error) { return "", nil, refusal{err} }
	if t.paused || t.closed {
		return refuse(protoErr(CodeUnavailable, "The operator has paused this table; actions wait until it resumes."))
	}
	s, ok := t.seatOf(c.player.ID)
	if !ok {
		return refuse(protoErr(CodeNotSeated, "You have no seat at this table."))
	}
	v := t.acts.check(c.player.ID, clientID)
	switch v.admission {
	case admitResent:
		if l, ok := t.acts.resend(v.open.ID); ok {
			// The same act again: the DM tries it once more.
			t.queueLife(l)
			t.maybeStart()
		}
		return t.ackStatus(v.open), nil, nil // a retried act is not applied twice
	case admitClosed:
		status, err := answerClosed(v.closed.State)
		return status, nil, err
	case admitBusy:
		return refuse(protoErr(CodeBusy, "Your previous action is still waiting to be resolved."))
	}
	ch := t.st.CharacterBySeat(s.Seat)
	if ch == nil {
		return refuse(protoErr(CodeNotSeated, "Your character has left the table."))
	}
	// The same rule the snapshot's can_act and turn show the page (turnOf).
	switch turnOf(t.st, ch) {
	case TurnDown:
		return refuse(protoErr(CodeDead, ch.Name+" is unconscious and cannot act."))
	case TurnWaiting:
		return refuse(protoErr(CodeNotYourTurn, fmt.Sprintf("It is %s's turn.", t.st.Game.Combat.Current().Name)))
	}
	a := engine.PendingAction{ID: newID("a"), PlayerID: c.player.ID, CharacterID: ch.ID, Seat: s.Seat, ClientID: clientID,
		Text: text, Status: engine.ActionPending, CreatedAt: t.h.cfg.Now().UTC()}
	commit := store.Commit{AddPending: &a}
	if v.admission == admitReplace {
		stale := v.open
		commit.Abandon = []string{stale.ID}
		commit.Events = append(commit.Events, abandonedEvent(stale, "replaced by "+ch.Name+"'s new action"))
	}
	commit.Events = append(commit.Events, engine.ActionEvent(a, ch.Name))
	return "", &commit, nil
}

// refusal is act's answer to an act it refuses with err. The act may be
// one the player sent before, so the caller looks it up (answerRetry) off
// the table goroutine: a refused act costs the table no disk read.
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }

// answerRetry answers an act that is refused with err, or whose client id
// is taken: if the player already sent this very act, the answer is about
// that one (answerClosed). Otherwise err stands. Safe off the table
// goroutine.
func (t *table) answerRetry(ctx context.Context, playerID, clientID string, err error) (string, error) {
	l, found, lerr := t.h.cfg.Store.ActionByClientID(ctx, t.id, playerID, clientID)
	if lerr != nil {
		t.log.Warn("look up a retried act", "player", playerID, "err", lerr)
		return "", err
	}
	if !found {
		return "", err
	}
	return answerClosed(l.State)
}

// answerClosed answers an act sent again, by how the action it names is:
// applied, or still waiting: acked again, so a client that lost its ack
// learns its action happened (or will); abandoned: refused with code
// abandoned.
func answerClosed(state string) (string, error) {
	switch state {
	case store.ActionAbandoned:
		return "", protoErr(CodeAbandoned, "This action was abandoned without being played.")
	case store.ActionResolved:
		return "accepted", nil
	default:
		return "queued", nil
	}
}

// CodeAbandoned is the code of the `system` event that tells a player
// their action was dropped without being played, and of the error that
// answers a retry of it.
const CodeAbandoned = "abandoned"

// abandonedEvent tells the table that action a is abandoned, and why.
func abandonedEvent(a engine.PendingAction, why string) engine.Event {
	text := a.Text
	if r := []rune(text); len(r) > 80 {
		text = string(r[:80]) + "…"
	}
	return engine.NewEvent(engine.SystemData{Code: CodeAbandoned, Message: fmt.Sprintf("The action %q was abandoned without being played: %s.", text, why),
		ActionID: a.ID, PlayerID: a.PlayerID})
}

func (t *table) ackStatus(a engine.PendingAction) string {
	if t.job != nil && t.job.action != nil && t.job.action.ID == a.ID {
		return "accepted"
	}
	return "queued"
}

// say handles a player's `say` frame: answer gets "accepted" once the line
// is durable, or the error.
func (t *table) say(ctx context.Context, c *client, text string, answer func(status string, err error)) {
	if err := t.open(); err != nil {
		answer("", err)
		return
	}
	ev := engine.ChatEvent(*c.player, text)
	_, err := t.queue(ctx, store.Commit{Events: []engine.Event{ev}}, "", func(err error) { answer("accepted", err) })
	if err != nil {
		answer("", err)
	}
}
