package hub

import (
	"context"
	"fmt"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// The owner's word to the DM (PROTOCOL.md "Undo, notes and the owner's
// word to the DM"): a whisper for the next turn, a corrected narration,
// and the players' scores of narrations.

// maxEditLen bounds a corrected narration.
const maxEditLen = 4000

// maxWaitingWhispers bounds the whispers waiting for the DM's next turn,
// all of which go into its prompt.
const maxWaitingWhispers = 5

// whisper answers a `whisper` frame: the owner's private instruction,
// made durable, then read by the DM's next turn. It is in no event: no
// player or spectator ever gets it.
func (c *client) whisper(t *table, f inFrame) {
	if f.ID == "" {
		c.reply(errorFrame("", CodeBadRequest, "whisper needs an id."))
		return
	}
	if c.player == nil {
		c.reply(errorFrame(f.ID, CodeForbidden, "Only the table's owner may whisper to the DM."))
		return
	}
	text, err := engine.CleanText("text", f.Text, maxWhisperLen)
	if err == nil && text == "" {
		err = engine.Errorf(engine.EINVALID, "text must not be empty.")
	}
	if err != nil {
		c.reply(errorFrame(f.ID, CodeBadRequest, engine.ErrorMessage(err)))
		return
	}
	by := c.player.ID
	// The owner is read on the table goroutine, which owns the table's
	// settings.
	cmd := func() {
		if !t.owns(by) {
			c.send(errorFrame(f.ID, CodeForbidden, "Only the table's owner may whisper to the DM."))
			return
		}
		if err := t.open(); err != nil {
			c.answerError(t, f, err)
			return
		}
		if len(t.own.whispers) >= maxWaitingWhispers {
			c.answerError(t, f, engine.Errorf(engine.ECONFLICT, "%d whispers already wait for the DM's next turn.", maxWaitingWhispers))
			return
		}
		w := &store.Whisper{Text: text, By: by, CreatedAt: t.h.cfg.Now().UTC()}
		err := t.commit(context.Background(), store.Commit{Owner: &store.OwnerChange{AddWhisper: w}}, "")
		if err != nil {
			c.answerError(t, f, fmt.Errorf("whisper at %s: %w", t.id, err))
			return
		}
		t.own.whispers = append(t.own.whispers, *w)
		c.send(ackFrame(f.ID, "accepted"))
	}
	if !t.post(cmd) {
		c.answerError(t, f, errShuttingDown)
	}
}

// narrationAt returns event seq of the table if it is a narration:
// ENOTFOUND if there is no such event, EINVALID if it is not a narration.
func (h *Hub) narrationAt(ctx context.Context, tableID string, seq int64) (engine.Event, engine.NarrationData, error) {
	if seq <= 0 {
		return engine.Event{}, engine.NarrationData{}, engine.Errorf(engine.ENOTFOUND, "No event %d at this table.", seq)
	}
	evs, err := h.cfg.Store.Events(ctx, tableID, seq-1, 1)
	if err != nil {
		return engine.Event{}, engine.NarrationData{}, err
	}
	if len(evs) == 0 || evs[0].Seq != seq {
		return engine.Event{}, engine.NarrationData{}, engine.Errorf(engine.ENOTFOUND, "No event %d at this table.", seq)
	}
	n, ok := evs[0].Data.(engine.NarrationData)
	if !ok {
		return engine.Event{}, engine.NarrationData{}, engine.Errorf(engine.EINVALID, "Event %d is not a narration.", seq)
	}
	return evs[0], n, nil
}

// EditNarration corrects the text of narration seq, for the table's owner
// p (EFORBIDDEN for anyone else): an `edit` event tells clients, and the
// agents' history holds the corrected text from then on. ENOTFOUND if
// there is no such event, EINVALID if it is not a narration or the text
// is empty or too long.
func (h *Hub) EditNarration(ctx context.Context, tableID string, p engine.Player, seq int64, text string) (engine.EditData, error) {
	text, err := engine.CleanText("text", text, maxEditLen)
	if err == nil && text == "" {
		err = engine.Errorf(engine.EINVALID, "text must not be empty.")
	}
	if err != nil {
		return engine.EditData{}, err
	}
	t, err := h.ownerOf(tableID, p.ID, "correct a narration")
	if err != nil {
		return engine.EditData{}, err
	}
	ev, n, err := h.narrationAt(ctx, tableID, seq)
	if err != nil {
		return engine.EditData{}, err
	}
	// The history message that made the narration, read here, off the
	// table goroutine: the last one of its turn with a narration. A retcon
	// may undo that turn before the edit commits, and the turn played
	// again takes its number: the table checks the retcons it made since
	// (retracted), and the store every retcon (store.OwnerChange.EditOf).
	var edit *store.HistoryEdit
	if turnNo, ok := engine.ParseTurn(ev.Turn); ok && n.Agent != "" {
		rows, err := h.cfg.Store.ActiveHistory(ctx, tableID, n.Agent, 0)
		if err != nil {
			return engine.EditData{}, err
		}
		edit = historyEdit(rows, n.Agent, turnNo, text)
	}
	d := engine.EditData{Seq: seq, Text: text, By: p.ID}
	err = t.callOpen(ctx, func() error {
		if t.retracted(ev) {
			return store.ErrRetracted(seq)
		}
		c := store.Commit{Events: []engine.Event{engine.NewEvent(d)}, Owner: &store.OwnerChange{Edit: edit, EditOf: seq}}
		if err := t.commit(ctx, c, t.turnLabel()); err != nil {
			return fmt.Errorf("edit narration %d at %s: %w", seq, t.id, err)
		}
		if edit != nil {
			t.hist.forget(edit.Agent)
		}
		return nil
	})
	return d, err
}

// historyEdit finds, among an agent's stored messages, the last one of
// turn turnNo that carries a narration, and returns it rewritten to text;
// nil if there is none (archived, or a turn without one).
func historyEdit(rows []store.AgentMessage, agentName string, turnNo int, text string) *store.HistoryEdit {
	var turn []store.AgentMessage
	for _, r := range rows {
		if r.Turn == turnNo {
			turn = append(turn, r)
		}
	}
	for i := len(turn) - 1; i >= 0; i-- {
		msgs := agent.DecodeMessages(turn[i : i+1])
		if len(msgs) != 1 || msgs[0].Role != "assistant" {
			continue
		}
		m := msgs[0]
		if agent.EditNarration(&m, text) {
			return &store.HistoryEdit{Agent: agentName, Turn: turnNo, Index: i, Body: m.AppendJSON(nil)}
		}
	}
	return nil
}

// Feedback records a seated player's score (1 or -1, with an optional
// comment of at most 500 characters) of narration seq, replacing the one
// they gave before; it is stored with the model call that made the
// narration. EFORBIDDEN for anyone not seated, ENOTFOUND for no such
// event, EINVALID for a bad score or comment or an event that is not a
// narration.
func (h *Hub) Feedback(ctx context.Context, tableID string, p engine.Player, seq int64, score int, comment string) error {
	if score != 1 && score != -1 {
		return engine.Errorf(engine.EINVALID, "score must be 1 or -1.")
	}
	comment, err := engine.CleanText("comment", comment, maxNoteLen)
	if err != nil {
		return err
	}
	t, err := h.table(tableID)
	if err != nil {
		return err
	}
	ev, n, err := h.narrationAt(ctx, tableID, seq)
	if err != nil {
		return err
	}
	f := store.Feedback{TableID: tableID, Seq: seq, PlayerID: p.ID, Score: score,
		Comment: comment, At: h.cfg.Now().UTC(), Turn: ev.Turn, Agent: n.Agent}
	// Committed by the table, after the turn that made the narration and
	// its model calls.
	return t.callOpen(ctx, func() error {
		if _, seated := t.seatOf(p.ID); !seated {
			return engine.Errorf(engine.EFORBIDDEN, "Only the table's seated players may score its narrations.")
		}
		if err := t.commit(ctx, store.Commit{Owner: &store.OwnerChange{Feedback: &f}}, ""); err != nil {
			return fmt.Errorf("feedback on %s event %d: %w", tableID, seq, err)
		}
		return nil
	})
}

// FeedbackGroups returns the players' scores given since since, by model
// and prompt version, for the operator.
func (h *Hub) FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error) {
	return h.cfg.Store.FeedbackGroups(ctx, since)
}
