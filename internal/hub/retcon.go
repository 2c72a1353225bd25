package hub

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Retcon (PROTOCOL.md "Undo, notes and the owner's word to the DM"): the
// owner undoes the last DM turn that resolved a player action. Every such
// turn is committed with a save point (the state before it, its action
// and its first seq); the store keeps the last store.MaxSavePoints, so a
// retcon works after a restart. The undo itself is ONE commit: the state
// before the turn (world, party, fight, the dice generator's position),
// the agents' history and memories cut back, the action opened again or
// abandoned, and the `retcon` event; a crash leaves the table before or
// after it.

// Retcon's "then".
const (
	RetconRetry = "retry"
	RetconDrop  = "drop"
)

// jobOwner is what a turn job reads of the table's notes and the owner's
// whispers, and the state before it, for its save point.
type jobOwner struct {
	notes    []string
	whispers []store.Whisper
	// before is the JSON of the state before the turn, on turns that
	// resolve a player action.
	before json.RawMessage
	// save is the save point the turn's commit carries (turnOwner).
	save *store.SavePoint
}

// jobOwner captures the notes and the waiting whispers for the next turn.
// Called on the table goroutine.
func (t *table) jobOwner() jobOwner {
	return jobOwner{notes: t.noteTexts(), whispers: slices.Clone(t.own.whispers)}
}

// saveBefore keeps the state before a turn that resolves action a (nil:
// none to keep). Called by the job before it changes st.
func (o *jobOwner) saveBefore(st *engine.State, a *engine.PendingAction) error {
	if a == nil {
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("save the state before the turn: %w", err)
	}
	o.before = b
	return nil
}

func (o *jobOwner) whisperTexts() []string {
	if len(o.whispers) == 0 {
		return nil
	}
	out := make([]string, len(o.whispers))
	for i, w := range o.whispers {
		out[i] = w.Text
	}
	return out
}

// turnOwner is what finished job j writes with its turn: the whispers it
// read, and its save point. nil when neither. The turn's events are the
// first of its commit: numbered from t.numbered+1.
func (t *table) turnOwner(j *job) *store.OwnerChange {
	var o store.OwnerChange
	for _, w := range j.owner.whispers {
		o.UseWhispers = append(o.UseWhispers, w.ID)
	}
	if j.action != nil && j.owner.before != nil {
		o.Save = &store.SavePoint{Turn: j.turnNo, Action: *j.action, FromSeq: t.numbered + 1, State: j.owner.before}
		j.owner.save = o.Save
	}
	if o.Save == nil && len(o.UseWhispers) == 0 {
		return nil
	}
	return &o
}

// turnQueued brings the table's whispers and save points in line with
// job j's turn, queued with the store.
func (t *table) turnQueued(j *job) {
	if len(j.owner.whispers) > 0 {
		t.own.whispers = slices.DeleteFunc(t.own.whispers, func(w store.Whisper) bool {
			return slices.ContainsFunc(j.owner.whispers, func(u store.Whisper) bool { return u.ID == w.ID })
		})
		for _, w := range j.owner.whispers {
			w.UsedTurn = j.turnNo
			t.own.read = append(t.own.read, w)
		}
	}
	if j.owner.save != nil {
		t.own.points = append(t.own.points, *j.owner.save)
		if over := len(t.own.points) - store.MaxSavePoints; over > 0 {
			t.own.points = slices.Delete(t.own.points, 0, over)
		}
	}
	t.forgetRead()
}

// forgetRead lets go of the whispers read before the oldest turn a retcon
// can undo: no retcon makes them wait again.
func (t *table) forgetRead() {
	oldest := 0
	if len(t.own.points) > 0 {
		oldest = t.own.points[0].Turn
	}
	t.own.read = slices.DeleteFunc(t.own.read, func(w store.Whisper) bool { return oldest == 0 || w.UsedTurn < oldest })
}

// unread makes the whispers read by turn from and after wait again, as
// the store does with the retcon of turn from, oldest first.
func (t *table) unread(from int) {
	for _, w := range t.own.read {
		if w.UsedTurn >= from {
			w.UsedTurn = 0
			t.own.whispers = append(t.own.whispers, w)
		}
	}
	t.own.read = slices.DeleteFunc(t.own.read, func(w store.Whisper) bool { return w.UsedTurn >= from })
	slices.SortFunc(t.own.whispers, func(a, b store.Whisper) int { return cmp.Compare(a.ID, b.ID) })
}

// RetconResult is what POST /api/tables/{id}/retcon answers.
type RetconResult struct {
	Turn    string `json:"turn"`
	FromSeq int64  `json:"from_seq"`
	ToSeq   int64  `json:"to_seq"`
}

// Retcon undoes the last turn that resolved a player action, for the
// table's owner p (EFORBIDDEN for anyone else). then is RetconRetry (the
// action is played again and meets the same dice) or RetconDrop (it is
// abandoned; the player may act anew); anything else is EINVALID.
// ECONFLICT while a turn runs, on a closed table, or when nothing can be
// undone (up to store.MaxSavePoints turns, one after another).
func (h *Hub) Retcon(ctx context.Context, tableID string, p engine.Player, then string) (RetconResult, error) {
	if then != RetconRetry && then != RetconDrop {
		return RetconResult{}, engine.Errorf(engine.EINVALID, `then must be "retry" or "drop".`)
	}
	t, err := h.ownerOf(tableID, p.ID, "undo a turn")
	if err != nil {
		return RetconResult{}, err
	}
	var res RetconResult
	err = t.callSystem(ctx, func() error {
		r, err := t.retcon(ctx, p, then)
		res = r
		return err
	})
	if err == nil {
		h.log.Info("retcon", "table", tableID, "turn", res.Turn, "from_seq", res.FromSeq, "to_seq", res.ToSeq, "then", then)
	}
	return res, err
}

// retcon runs on the table goroutine (Retcon).
func (t *table) retcon(ctx context.Context, p engine.Player, then string) (RetconResult, error) {
	if err := t.open(); err != nil {
		return RetconResult{}, err
	}
	switch {
	case t.job != nil:
		return RetconResult{}, engine.Errorf(engine.ECONFLICT, "A turn is being resolved; undo it once it ends.")
	case len(t.own.points) == 0:
		return RetconResult{}, engine.Errorf(engine.ECONFLICT, "There is no turn to undo.")
	}
	pt := t.own.points[len(t.own.points)-1]
	before, err := t.restoredState(pt)
	if err != nil {
		return RetconResult{}, err
	}
	turn := engine.TurnLabel(pt.Turn)
	res := RetconResult{Turn: turn, FromSeq: pt.FromSeq, ToSeq: t.numbered}
	undo := engine.RetconData{Turn: turn, FromSeq: res.FromSeq, ToSeq: res.ToSeq, By: p.ID, ActionID: pt.Action.ID, Then: then}
	ev := engine.NewEvent(undo)
	retry := then == RetconRetry
	c := store.Commit{State: before, Events: []engine.Event{ev},
		Owner: &store.OwnerChange{Retcon: &store.Retcon{Turn: pt.Turn, ActionID: pt.Action.ID, Reopen: retry}}}
	if err := t.commit(ctx, c, turn); err != nil {
		return RetconResult{}, fmt.Errorf("retcon %s at %s: %w", turn, t.id, err)
	}
	t.setState(before)
	t.hist.invalidate()
	t.own.points = t.own.points[:len(t.own.points)-1]
	t.own.retcons = append(t.own.retcons, undo)
	t.unread(pt.Turn) // as the store did, with no read of it here
	t.forgetRead()
	if retry && !t.isAction(pt.Action.ID) {
		if pt.Action.Kind == engine.ActionStart {
			t.acts.admitStart(pt.Action)
		} else {
			t.acts.admit(pt.Action)
		}
	}
	t.updateSummary()
	frame := snapshotFrame(t.snapshot())
	for c := range t.clients {
		c.send(frame)
	}
	t.maybeStart()
	return res, nil
}

// retracted reports whether a retcon made since the table loaded
// retracted event e.
func (t *table) retracted(e engine.Event) bool {
	return slices.ContainsFunc(t.own.retcons, func(r engine.RetconData) bool { return r.Retracted(e) })
}

// restoredState is the state before save point pt's turn, with the party
// as the seats are now (a character who sat down since stays, one whose
// player left since goes) and the table's settings as they are now.
func (t *table) restoredState(pt store.SavePoint) (*engine.State, error) {
	var st engine.State
	if err := json.Unmarshal(pt.State, &st); err != nil {
		return nil, fmt.Errorf("read the save point of turn %d: %w", pt.Turn, err)
	}
	st.Catalogue = t.st.Catalogue
	// The settings are the owner's, not the story's: a retcon keeps them
	// as they are now, or a table switched to npc_hp "words" after the
	// turn would show NPC numbers again while its summary says "words".
	st.Config = t.st.Config
	seated := map[string]bool{}
	for _, s := range t.seats {
		seated[s.CharacterID] = true
	}
	st.Party = slices.DeleteFunc(st.Party, func(c *engine.Character) bool { return !seated[c.ID] })
	for _, c := range t.st.Party {
		if st.Character(c.ID) == nil {
			cc := *c
			st.Party = append(st.Party, &cc)
		}
	}
	slices.SortFunc(st.Party, func(a, b *engine.Character) int { return strings.Compare(a.Seat, b.Seat) })
	return &st, nil
}
