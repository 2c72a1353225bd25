package web

import (
	"context"
	"net/http"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// The table owner's API and the join page (PROTOCOL.md "Table owners").
// Who may see what is decided by the hub (hub.Visible); here requests are
// read and answered.

// ownerTables is the hub's owner side, part of tables.
type ownerTables interface {
	Visible(ctx context.Context, id string, v hub.Viewer) error
	ListFor(ctx context.Context, playerID string) []hub.TableSummary
	SitInvited(ctx context.Context, tableID string, p engine.Player, spec engine.NewCharacterSpec, invite string) (hub.Character, error)
	MyTables(ctx context.Context, playerID string) ([]hub.MyTable, error)
	Patch(ctx context.Context, id string, p engine.Player, patch engine.SettingsPatch) (hub.TableSummary, error)
	Invite(ctx context.Context, id string, p engine.Player) (string, error)
	InviteTable(ctx context.Context, code, playerID string) (hub.TableSummary, error)
	Kick(ctx context.Context, id string, p engine.Player, seat string) error
	Ban(ctx context.Context, id string, p engine.Player, target string) error
	Unban(ctx context.Context, id string, p engine.Player, target string) error
	OwnerPause(ctx context.Context, id string, p engine.Player) error
	OwnerResume(ctx context.Context, id string, p engine.Player) error
}

// ownerRoutes registers the owner's routes.
func (s *Server) ownerRoutes(hf func(pattern string, h http.HandlerFunc)) {
	hf("GET /api/players/me/tables", s.authed(s.myTables))
	hf("PATCH /api/tables/{id}", s.authed(s.patchTable))
	hf("POST /api/tables/{id}/invite", s.authed(s.invite))
	hf("DELETE /api/tables/{id}/seats/{seat}", s.authed(s.kick))
	hf("POST /api/tables/{id}/bans", s.authed(s.ban))
	hf("DELETE /api/tables/{id}/bans/{player}", s.authed(s.unban))
	hf("POST /api/tables/{id}/pause", s.authed(s.ownerPause))
	hf("POST /api/tables/{id}/resume", s.authed(s.ownerResume))
	hf("GET /join/{code}", s.joinPage)
}

// viewer is who a request comes from, for hub.Visible: its player (none
// when it carries no valid token; query: a websocket's ?token= counts)
// and its ?invite= code.
func (s *Server) viewer(r *http.Request, query bool) (hub.Viewer, *engine.Player, error) {
	v := hub.Viewer{Invite: r.URL.Query().Get("invite")}
	p, err := s.player(r, query)
	if err != nil {
		return v, nil, err
	}
	if p != nil {
		v.PlayerID = p.ID
	}
	return v, p, nil
}

// visibleTable returns the table of the request's path ({id}) if its
// viewer may see it; otherwise it answers the request itself and reports
// false: a stranger at a private table gets the same 404 as for a table
// that does not exist.
func (s *Server) visibleTable(w http.ResponseWriter, r *http.Request) (string, bool) {
	id, err := tableID(r)
	if err == nil {
		var v hub.Viewer
		if v, _, err = s.viewer(r, false); err == nil {
			err = s.hub.Visible(r.Context(), id, v)
		}
	}
	if err != nil {
		s.error(w, r, err)
		return "", false
	}
	return id, true
}

type myTablesResponse struct {
	Tables []hub.MyTable `json:"tables"`
}

// myTables is GET /api/players/me/tables.
func (s *Server) myTables(w http.ResponseWriter, r *http.Request, p engine.Player) {
	ts, err := s.hub.MyTables(r.Context(), p.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, myTablesResponse{Tables: ts})
}

type patchRequest struct {
	Name         *string `json:"name"`
	Private      *bool   `json:"private"`
	NPCHP        *string `json:"npc_hp"`
	TurnTimeoutS *int    `json:"turn_timeout_s"`
}

// patchTable is PATCH /api/tables/{id}.
func (s *Server) patchTable(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req patchRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	sum, err := s.hub.Patch(r.Context(), id, p, engine.SettingsPatch{Name: req.Name, Private: req.Private, NPCHP: req.NPCHP, TurnTimeoutS: req.TurnTimeoutS})
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

type inviteResponse struct {
	Code string `json:"code"`
	URL  string `json:"url"`
}

// invite is POST /api/tables/{id}/invite: a new code, the old one dead.
func (s *Server) invite(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	code, err := s.hub.Invite(r.Context(), id, p)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, inviteResponse{Code: code, URL: "/join/" + code})
}

// kick is DELETE /api/tables/{id}/seats/{seat}.
func (s *Server) kick(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	seat := r.PathValue("seat")
	if len(seat) > 8 {
		s.error(w, r, &apiError{code: hub.CodeNotFound, message: "No such seat."})
		return
	}
	if err := s.hub.Kick(r.Context(), id, p, seat); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type banRequest struct {
	PlayerID string `json:"player_id"`
}

// ban is POST /api/tables/{id}/bans.
func (s *Server) ban(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req banRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.hub.Ban(r.Context(), id, p, req.PlayerID); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// unban is DELETE /api/tables/{id}/bans/{player}.
func (s *Server) unban(w http.ResponseWriter, r *http.Request, p engine.Player) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.hub.Unban(r.Context(), id, p, r.PathValue("player")); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// ownerPause is POST /api/tables/{id}/pause.
func (s *Server) ownerPause(w http.ResponseWriter, r *http.Request, p engine.Player) {
	s.ownerMark(w, r, p, s.hub.OwnerPause)
}

// ownerResume is POST /api/tables/{id}/resume.
func (s *Server) ownerResume(w http.ResponseWriter, r *http.Request, p engine.Player) {
	s.ownerMark(w, r, p, s.hub.OwnerResume)
}

func (s *Server) ownerMark(w http.ResponseWriter, r *http.Request, p engine.Player, f func(context.Context, string, engine.Player) error) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := f(r.Context(), id, p); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// joinView is what the join page shows.
type joinView struct {
	Table   hub.TableSummary
	Code    string
	Player  *engine.Player
	Classes []engine.Class
	Version string
}

// joinPage is GET /join/{code}: the invited table's name and adventure,
// and one form to pick a name (if new), make a character and sit, or
// watch.
func (s *Server) joinPage(w http.ResponseWriter, r *http.Request) {
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("join page: resolve player", "err", err)
	}
	pid := ""
	if p != nil {
		pid = p.ID
	}
	code := r.PathValue("code")
	t, err := s.hub.InviteTable(r.Context(), code, pid)
	if err != nil {
		st, _, msg := status(err)
		if st >= 500 {
			s.log.Error("join page", "err", err)
		}
		s.render(w, r, st, errorPage(st, msg, s.assetVersion))
		return
	}
	s.render(w, r, http.StatusOK, joinPage(joinView{Table: t, Code: code, Player: p, Classes: s.hub.Classes(), Version: s.assetVersion}))
}
