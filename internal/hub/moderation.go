package hub

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Moderation: what the operator may do to a table (PROTOCOL.md "Operator
// (admin)"). Each action runs on the table goroutine, is audited as a
// `system` event with code "moderation" committed with its effect, and is
// logged with slog.

// CodeModeration is the code of the `system` events that audit the
// operator's actions.
const CodeModeration = "moderation"

// CloseFreed is the close code of a player's sockets when the operator
// frees the seat.
const CloseFreed websocket.StatusCode = 4003

// moderate runs f on table id's goroutine (closed tables included when
// closedOK) with by, the console user who acts (ActorFrom), and logs the
// action.
func (h *Hub) moderate(ctx context.Context, id, action string, closedOK bool, f func(t *table, by string) error, attrs ...any) error {
	t, err := h.anyTable(id)
	if err != nil {
		return err
	}
	by := ActorFrom(ctx)
	err = t.callSystem(ctx, func() error {
		if !closedOK {
			if err := t.open(); err != nil {
				return err
			}
		}
		return f(t, by)
	})
	args := append([]any{"table", id, "action", action, "by", by}, attrs...)
	if err != nil {
		h.log.Warn("moderation refused", append(args, "err", err)...)
		return err
	}
	h.metrics.moderated(action)
	h.log.Info("moderation", args...)
	return nil
}

// auditEvent is the `system` event that records a moderation action and
// who acted.
func auditEvent(action, message, by string) engine.Event {
	return engine.NewEvent(engine.SystemData{Code: CodeModeration, Message: message, Action: action, By: by})
}

// audit commits the audit event of action, taken by by, with the rest of c.
func (t *table) audit(ctx context.Context, action, message, by string, c store.Commit) error {
	c.Events = append([]engine.Event{auditEvent(action, message, by)}, c.Events...)
	turn := t.turnLabel()
	if err := t.commit(ctx, c, turn); err != nil {
		return fmt.Errorf("%s %s: %w", action, t.id, err)
	}
	return nil
}

// Pause stops a table: no new turn starts (a running one finishes) and
// `act` is refused with `unavailable`; chat and spectators go on. The mark
// survives restarts.
func (h *Hub) Pause(ctx context.Context, id string) error {
	return h.setPaused(ctx, id, true, "pause", "The operator paused the table. Actions wait until it resumes.")
}

// Resume undoes Pause and plays what waited.
func (h *Hub) Resume(ctx context.Context, id string) error {
	return h.setPaused(ctx, id, false, "resume", "The operator resumed the table.")
}

// setPaused stores the table's paused mark with the audit event of action
// (text), in one commit: a crash between the two left a mark without its
// audit line. Then it arms the turn timer (paused) or starts what waited
// (resumed). Setting the mark it already has does nothing.
func (h *Hub) setPaused(ctx context.Context, id string, paused bool, action, text string) error {
	return h.moderate(ctx, id, action, false, func(t *table, by string) error {
		return t.setPausedMark(ctx, paused, action, text, by)
	})
}

// setPausedMark is setPaused on the table goroutine; by is who paused
// (ByOwner, or the console user moderate names).
func (t *table) setPausedMark(ctx context.Context, paused bool, action, text, by string) error {
	if t.paused == paused {
		return nil
	}
	ev := auditEvent(action, text, by)
	if err := t.commit(ctx, store.Commit{Paused: &paused, Events: []engine.Event{ev}}, t.turnLabel()); err != nil {
		return fmt.Errorf("%s %s: %w", action, t.id, err)
	}
	t.paused = paused
	t.updateSummary()
	t.stateChanged()
	if paused {
		t.armTimer()
	} else {
		t.maybeStart()
	}
	return nil
}

// EndCombat ends the table's fight with outcome error_abort: combat_ended
// is emitted, the fight is over and exploration resumes. ECONFLICT while a
// turn runs (pause the table and try again), EINVALID without a fight.
func (h *Hub) EndCombat(ctx context.Context, id string) error {
	return h.moderate(ctx, id, "end_combat", false, func(t *table, by string) error {
		if t.st.Game.Combat == nil {
			return engine.Errorf(engine.EINVALID, "There is no fight to end.")
		}
		if t.job != nil {
			return engine.Errorf(engine.ECONFLICT, "A turn is being resolved; pause the table and try again when it ends.")
		}
		return t.abortCombat(ctx, auditEvent("end_combat", "The operator ended the fight.", by), "The operator ended the fight.")
	})
}

func (t *table) isAction(id string) bool {
	_, ok := t.acts.find(id)
	return ok
}

// RetryAction plays a waiting action again now, whatever its attempts.
// ENOTFOUND if the table has no such open action, ECONFLICT if it runs.
func (h *Hub) RetryAction(ctx context.Context, id, actionID string) error {
	return h.moderate(ctx, id, "retry", false, func(t *table, by string) error {
		if !t.isAction(actionID) {
			return engine.Errorf(engine.ENOTFOUND, "No waiting action %q at this table.", actionID)
		}
		if t.job != nil && t.job.action != nil && t.job.action.ID == actionID {
			return engine.Errorf(engine.ECONFLICT, "The action is being resolved right now.")
		}
		if err := t.audit(ctx, "retry", "The operator retries a waiting action.", by, store.Commit{}); err != nil {
			return err
		}
		t.acts.retry(actionID)
		t.acts.lift()
		t.maybeStart()
		return nil
	}, "action_id", actionID)
}

// AbandonAction resolves a waiting action without playing it: a `system`
// event says so and the action is never applied, exactly once (a second
// call finds no such action: ENOTFOUND). An action whose turn is running
// is abandoned too: that turn's result is dropped when it ends.
func (h *Hub) AbandonAction(ctx context.Context, id, actionID string) error {
	return h.moderate(ctx, id, "abandon", true, func(t *table, by string) error {
		if !t.isAction(actionID) {
			return engine.Errorf(engine.ENOTFOUND, "No waiting action %q at this table.", actionID)
		}
		ev := engine.NewEvent(engine.SystemData{Code: CodeModeration, Message: "The operator abandoned an action; it will not be played.",
			Action: "abandon", ActionID: actionID, By: by})
		if err := t.commit(ctx, store.Commit{Events: []engine.Event{ev}, Abandon: []string{actionID}}, t.turnLabel()); err != nil {
			return fmt.Errorf("abandon %s: %w", actionID, err)
		}
		t.acts.abandon(actionID, t.job != nil && t.job.action != nil && t.job.action.ID == actionID)
		t.updateSummary()
		t.maybeStart()
		return nil
	}, "action_id", actionID)
}

// FreeSeat frees a seat: the player's sockets close with 4003 and the
// character leaves. ENOTFOUND if nobody sits there.
func (h *Hub) FreeSeat(ctx context.Context, id, seat string) error {
	return h.moderate(ctx, id, "free_seat", false, func(t *table, by string) error {
		for _, s := range t.seats {
			if s.Seat == seat {
				audit := auditEvent("free_seat", fmt.Sprintf("The operator freed seat %s.", seat), by)
				return t.freeSeat(ctx, s, removal{by: ByOperator, audit: []engine.Event{audit}, code: CloseFreed, reason: ReasonOperator})
			}
		}
		return engine.Errorf(engine.ENOTFOUND, "Nobody sits in seat %q.", seat)
	}, "seat", seat)
}

// CloseTable closes a table: it leaves the lobby, refuses new joins and
// actions, its sockets close (1000), no turn runs; its history stays
// readable by the operator. Closing twice is a no-op.
func (h *Hub) CloseTable(ctx context.Context, id string) error {
	return h.moderate(ctx, id, "close", true, func(t *table, by string) error {
		if t.closed {
			return nil
		}
		// The mark commits with its audit line, as setPaused's.
		now := t.h.cfg.Now().UTC()
		if err := t.audit(ctx, "close", "The operator closed the table.", by, store.Commit{ClosedAt: &now}); err != nil {
			return err
		}
		t.closed = true
		for c := range t.clients {
			c.close(websocket.StatusNormalClosure, "table closed by the operator")
		}
		for s := range t.subs {
			close(s.ch)
			delete(t.subs, s)
		}
		t.updateSummary()
		t.armTimer()
		t.log.LogAttrs(ctx, slog.LevelInfo, "table closed")
		return nil
	})
}
