package hub

import (
	"context"
	"fmt"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The table's notes (PROTOCOL.md "Undo, notes and the owner's word to the
// DM"): facts the table establishes and the DM must honour. They travel
// in every turn's user message (agent.Turn.Notes), never in the system
// prompt, and only as words: no note reaches a tool or the engine.

// NotesStore is the part of the store behind notes, whispers, feedback
// and retcons (internal/db's owner.go).
type NotesStore interface {
	// OwnerData returns a table's notes, its unread whispers and its save
	// points, each oldest first.
	OwnerData(ctx context.Context, tableID string) (store.OwnerData, error)
	// FeedbackGroups sums the scores given since since by model and
	// prompt version.
	FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error)
}

func (d deadlined) OwnerData(ctx context.Context, tableID string) (store.OwnerData, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.OwnerData(ctx, tableID)
}

func (d deadlined) FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.FeedbackGroups(ctx, since)
}

// Bounds of PROTOCOL.md.
const (
	maxNoteLen    = 500
	maxWhisperLen = 1000
)

// NoteView is a note as clients see it: PROTOCOL.md's fields, and the
// author's name (additive).
type NoteView struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	By        string    `json:"by"`
	ByName    string    `json:"by_name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// noteViews lists the table's notes, oldest first (nil when there are
// none: the snapshot leaves them out).
func (t *table) noteViews() []NoteView {
	if len(t.own.notes) == 0 {
		return nil
	}
	out := make([]NoteView, len(t.own.notes))
	for i, n := range t.own.notes {
		out[i] = noteView(n)
	}
	return out
}

func noteView(n store.Note) NoteView {
	return NoteView{ID: n.ID, Text: n.Text, By: n.By, ByName: n.ByName, CreatedAt: n.CreatedAt}
}

// noteTexts are the notes as the DM reads them.
func (t *table) noteTexts() []string {
	if len(t.own.notes) == 0 {
		return nil
	}
	out := make([]string, len(t.own.notes))
	for i, n := range t.own.notes {
		out[i] = n.Text
	}
	return out
}

// Notes returns a table's notes, oldest first, for whoever may see the
// table.
func (h *Hub) Notes(ctx context.Context, tableID string) ([]NoteView, error) {
	t, err := h.table(tableID)
	if err != nil {
		return nil, err
	}
	var out []NoteView
	err = t.call(ctx, func() error {
		out = t.noteViews()
		return nil
	})
	return nonNil(out), err
}

// AddNote adds a note written by p, the table's owner or a seated player:
// EFORBIDDEN for anyone else, EINVALID for a text that is empty or over
// 500 characters, ECONFLICT past 30 notes. The note and its `note` event
// are committed together.
func (h *Hub) AddNote(ctx context.Context, tableID string, p engine.Player, text string) (NoteView, error) {
	text, err := engine.CleanText("text", text, maxNoteLen)
	if err == nil && text == "" {
		err = engine.Errorf(engine.EINVALID, "text must not be empty.")
	}
	if err != nil {
		return NoteView{}, err
	}
	t, err := h.table(tableID)
	if err != nil {
		return NoteView{}, err
	}
	var v NoteView
	err = t.callOpen(ctx, func() error {
		if _, seated := t.seatOf(p.ID); !seated && !t.owns(p.ID) {
			return engine.Errorf(engine.EFORBIDDEN, "Only the table's owner and its seated players may add notes.")
		}
		if len(t.own.notes) >= store.MaxNotes {
			return engine.Errorf(engine.ECONFLICT, "The table has %d notes already; remove one first.", store.MaxNotes)
		}
		n := store.Note{ID: newID("n"), Text: text, By: p.ID, ByName: p.Name, CreatedAt: h.cfg.Now().UTC()}
		ev := engine.NewEvent(engine.NoteData{ID: n.ID, Text: n.Text, By: n.By})
		c := store.Commit{Events: []engine.Event{ev}, Owner: &store.OwnerChange{AddNote: &n}}
		if err := t.commit(ctx, c, t.turnLabel()); err != nil {
			return fmt.Errorf("add note at %s: %w", t.id, err)
		}
		t.own.notes = append(t.own.notes, n)
		v = noteView(n)
		return nil
	})
	return v, err
}

// RemoveNote removes note noteID for p, its author or the table's owner:
// ENOTFOUND if there is no such note, EFORBIDDEN for anyone else.
func (h *Hub) RemoveNote(ctx context.Context, tableID string, p engine.Player, noteID string) error {
	t, err := h.table(tableID)
	if err != nil {
		return err
	}
	return t.callOpen(ctx, func() error {
		i := -1
		for j, n := range t.own.notes {
			if n.ID == noteID {
				i = j
			}
		}
		if i < 0 {
			return engine.Errorf(engine.ENOTFOUND, "No note %q at this table.", noteID)
		}
		if t.own.notes[i].By != p.ID && !t.owns(p.ID) {
			return engine.Errorf(engine.EFORBIDDEN, "Only the note's author or the table's owner may remove it.")
		}
		ev := engine.NewEvent(engine.NoteRemovedData{ID: noteID, By: p.ID})
		c := store.Commit{Events: []engine.Event{ev}, Owner: &store.OwnerChange{RemoveNote: noteID}}
		if err := t.commit(ctx, c, t.turnLabel()); err != nil {
			return fmt.Errorf("remove note at %s: %w", t.id, err)
		}
		t.own.notes = append(t.own.notes[:i:i], t.own.notes[i+1:]...)
		return nil
	})
}
