package web

import (
	"net/http"

	"tavern/internal/engine"
)

// The living world's endpoints: start a character's session, the
// table's quests, and the caller's inventory.

// startSession handles POST /api/tables/{id}/session: the DM reads the
// caller's backstory and brings it to life (queued like an action).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return
	}
	actionID, err := s.hub.StartSession(r.Context(), id, p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"action_id": actionID, "status": "queued"})
}

// quests handles GET /api/tables/{id}/quests.
func (s *Server) quests(w http.ResponseWriter, r *http.Request) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return
	}
	qs, err := s.hub.Quests(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"quests": qs})
}

// inventory handles GET /api/tables/{id}/inventory: the caller's
// character, gold and items.
func (s *Server) inventory(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return
	}
	c, err := s.hub.Inventory(r.Context(), id, p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"character_id": c.ID, "name": c.Name, "gold": c.Gold, "inventory": c.Inventory, "equipped": c.Equipped})
}
