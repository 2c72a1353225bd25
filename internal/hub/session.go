package hub

import (
	"context"
	"slices"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// characterOf returns p's character at the table.
func (t *table) characterOf(p engine.Player) (*engine.Character, error) {
	s, ok := t.seatOf(p.ID)
	if !ok {
		return nil, engine.Errorf(engine.EFORBIDDEN, "You have no seat at this table; take a seat first.")
	}
	c := t.st.CharacterBySeat(s.Seat)
	if c == nil {
		return nil, engine.Errorf(engine.ENOTFOUND, "Your character has left the table.")
	}
	return c, nil
}

// startAction is the pending action of a character's session start.
func (t *table) startAction(p engine.Player, c *engine.Character) *engine.PendingAction {
	return &engine.PendingAction{ID: newID("a"), PlayerID: p.ID, CharacterID: c.ID, Seat: c.Seat, ClientID: "start:" + c.ID,
		Text: c.Backstory, Status: engine.ActionPending, CreatedAt: t.h.cfg.Now().UTC(), Kind: engine.ActionStart}
}

// StartSession queues the session start of p's character (seed 001's
// start-session): the DM reads its backstory, creates the items and people
// it names, and narrates an intro. Taking a seat queues it
// already; a character starts once. It returns the pending action's id.
func (h *Hub) StartSession(ctx context.Context, tableID string, p engine.Player) (string, error) {
	t, err := h.table(tableID)
	if err != nil {
		return "", err
	}
	var id string
	err = t.callOpen(ctx, func() error {
		c, err := t.characterOf(p)
		if err != nil {
			return err
		}
		if slices.Contains(t.st.Game.Started, c.ID) {
			return engine.Errorf(engine.ECONFLICT, "%s's session has already started.", c.Name)
		}
		if a, ok := t.acts.startOf(c.ID); ok {
			id = a.ID
			return nil // already queued: idempotent
		}
		a := t.startAction(p, c)
		if err := t.commit(ctx, store.Commit{AddPending: a}, ""); err != nil {
			return err
		}
		t.acts.admitStart(*a)
		id = a.ID
		t.maybeStart()
		return nil
	})
	return id, err
}

// Quests lists the table's quests (what the players know of them).
func (h *Hub) Quests(ctx context.Context, tableID string) ([]QuestView, error) {
	t, err := h.table(tableID)
	if err != nil {
		return nil, err
	}
	var out []QuestView
	err = t.call(ctx, func() error {
		out = questViews(t.st)
		return nil
	})
	return out, err
}

// Inventory returns p's character at the table, with its inventory.
func (h *Hub) Inventory(ctx context.Context, tableID string, p engine.Player) (Character, error) {
	t, err := h.table(tableID)
	if err != nil {
		return Character{}, err
	}
	var out Character
	err = t.call(ctx, func() error {
		c, err := t.characterOf(p)
		if err != nil {
			return err
		}
		out = characterView(t.st, c, t.playerNames())
		return nil
	})
	return out, err
}
