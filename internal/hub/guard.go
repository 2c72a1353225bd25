package hub

import (
	"context"

	"tavern/internal/engine"
)

// Who may change a table, decided in one place each: ownership by
// access.owns (ownerOf for the owner's calls), and a closed table by
// callOpen for every call of an owner or a player that changes it.

// errClosed refuses a change to a table the operator closed.
var errClosed = engine.Errorf(engine.ECONFLICT, "The table is closed.")

// owns reports whether playerID owns the table: the one test of who the
// owner is.
func (a *access) owns(playerID string) bool {
	return playerID != "" && playerID == a.owner
}

// owns is access.owns on the table goroutine.
func (t *table) owns(playerID string) bool { return t.access.Load().owns(playerID) }

// ownerOf returns table id if playerID owns it, for an owner's call that
// does what ("undo a turn"). A table the player may not see is ENOTFOUND,
// one they see but do not own EFORBIDDEN: "Only the table's owner may
// <what>."
func (h *Hub) ownerOf(id, playerID, what string) (*table, error) {
	t, err := h.table(id)
	if err != nil {
		return nil, err
	}
	a := t.access.Load()
	if err := a.sees(id, Viewer{PlayerID: playerID}); err != nil {
		return nil, err
	}
	if !a.owns(playerID) {
		return nil, engine.Errorf(engine.EFORBIDDEN, "Only the table's owner may %s.", what)
	}
	return t, nil
}

// IsOwner reports whether playerID owns table tableID.
func (h *Hub) IsOwner(tableID, playerID string) bool {
	_, err := h.ownerOf(tableID, playerID, "")
	return err == nil
}

// open returns errClosed once the operator closed the table. On the table
// goroutine, where closing happens: a check made before the call races
// with a close.
func (t *table) open() error {
	if t.closed {
		return errClosed
	}
	return nil
}

// callOpen is call for a change an owner or a player makes to the table:
// refused with ECONFLICT once the table is closed.
func (t *table) callOpen(ctx context.Context, f func() error) error {
	return t.call(ctx, func() error {
		if err := t.open(); err != nil {
			return err
		}
		return f()
	})
}
