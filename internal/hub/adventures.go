package hub

import (
	"context"

	"tavern/internal/engine"
)

// TableAdventures is what Adventures may add: the copy of the adventure
// each table was made from, kept when the table is made, so that a
// replaced or hidden adventure never changes a table already playing it
// (PROTOCOL.md "Adventures"). adventures.Shelf has it.
type TableAdventures interface {
	Keep(ctx context.Context, tableID, adventureID string) error
	ForTable(tableID, adventureID string) (*engine.Adventure, bool)
}

// adventureOf returns the adventure table meta plays: its kept copy when
// there is one.
func (h *Hub) adventureOf(meta engine.Table) (*engine.Adventure, bool) {
	if ta, ok := h.cfg.Adventures.(TableAdventures); ok {
		return ta.ForTable(meta.ID, meta.Adventure)
	}
	return h.cfg.Adventures.Get(meta.Adventure)
}

// keepAdventure stores the copy of the adventure a new table was made
// from; without it the table reads the adventure as it is now.
func (h *Hub) keepAdventure(ctx context.Context, meta engine.Table) {
	if ta, ok := h.cfg.Adventures.(TableAdventures); ok {
		if err := ta.Keep(ctx, meta.ID, meta.Adventure); err != nil {
			h.log.Warn("keep the adventure of a new table", "table", meta.ID, "adventure", meta.Adventure, "err", err)
		}
	}
}
