package web

import (
	"net/http"
	"strings"

	"tavern/internal/hub"
	"tavern/internal/store"
)

// The operator's players (PROTOCOL.md "Operator, continued"): search, a
// player's page, ban, unban, export and erase, as API and as pages.

func (s *Server) playerRoutes(hf func(pattern string, h http.HandlerFunc), a func(http.HandlerFunc) http.HandlerFunc) {
	m := func(h http.HandlerFunc) http.HandlerFunc { return a(s.moderator(h)) }
	hf("GET /api/admin/players", a(s.apiPlayers))
	hf("GET /api/admin/players/{pid}", a(s.apiPlayer))
	hf("GET /api/admin/players/{pid}/export", a(s.apiPlayerExport))
	hf("POST /api/admin/players/{pid}/ban", m(s.playerAction("ban", false)))
	hf("DELETE /api/admin/players/{pid}/ban", m(s.playerAction("unban", false)))
	hf("DELETE /api/admin/players/{pid}", m(s.playerAction("erase", false)))
	hf("GET /admin/players", a(s.adminPlayersPage))
	hf("GET /admin/players/{pid}", a(s.adminPlayerPage))
	hf("POST /admin/players/{pid}/ban", m(s.playerAction("ban", true)))
	hf("POST /admin/players/{pid}/unban", m(s.playerAction("unban", true)))
	hf("POST /admin/players/{pid}/erase", m(s.playerAction("erase", true)))
}

// playerID returns the {pid} path value, checked for shape.
func playerID(r *http.Request) (string, error) {
	id := r.PathValue("pid")
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) {
		return "", &apiError{code: hub.CodeNotFound, message: "No such player."}
	}
	return id, nil
}

// searchQuery is ?q=, bounded.
func searchQuery(r *http.Request) string {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > 100 {
		q = q[:100]
	}
	return q
}

func (s *Server) apiPlayers(w http.ResponseWriter, r *http.Request) {
	ps, err := s.operator.SearchPlayers(r.Context(), searchQuery(r))
	if err != nil {
		s.error(w, r, err)
		return
	}
	if ps == nil {
		ps = []store.PlayerRow{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"players": ps})
}

func (s *Server) apiPlayer(w http.ResponseWriter, r *http.Request) {
	id, err := playerID(r)
	var p store.PlayerDetail
	if err == nil {
		p, err = s.operator.Player(r.Context(), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// apiPlayerExport is GET /api/admin/players/{pid}/export: all their data,
// as a JSON file to download.
func (s *Server) apiPlayerExport(w http.ResponseWriter, r *http.Request) {
	id, err := playerID(r)
	var x any
	if err == nil {
		x, err = s.operator.ExportPlayer(r.Context(), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.log.Info("player exported", "player", id, "by", actorName(r.Context()))
	w.Header().Set("Content-Disposition", `attachment; filename="player_`+id+`.json"`)
	writeJSON(w, http.StatusOK, x)
}

type serverBanRequest struct {
	Reason string `json:"reason"`
}

// playerAction answers ban, unban and erase: 204 for the API, a redirect
// to the player's page for the console's forms.
func (s *Server) playerAction(action string, page bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := playerID(r)
		by := actorName(r.Context())
		reason := ""
		if err == nil && action == "ban" {
			if page {
				r.Body = http.MaxBytesReader(w, r.Body, 4096)
				reason = r.FormValue("reason")
			} else if r.ContentLength != 0 {
				var req serverBanRequest
				err = decode(w, r, &req)
				reason = req.Reason
			}
			if len(reason) > 500 {
				err = badRequest("reason: 500 characters at most.")
			}
		}
		if err == nil {
			switch action {
			case "ban":
				err = s.operator.BanPlayer(r.Context(), id, reason, by)
			case "unban":
				err = s.operator.UnbanPlayer(r.Context(), id, by)
			case "erase":
				err = s.operator.ErasePlayer(r.Context(), id, by)
			}
		}
		if err != nil {
			s.log.Warn("moderation refused", "action", action, "player", id, "by", by, "err", err)
			if page {
				s.adminFail(w, r, err)
			} else {
				s.error(w, r, err)
			}
			return
		}
		s.log.Info("moderation", "action", action, "player", id, "by", by)
		if !page {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Redirect(w, r, "/admin/players/"+id, http.StatusSeeOther)
	}
}

func (s *Server) adminPlayersPage(w http.ResponseWriter, r *http.Request) {
	q := searchQuery(r)
	ps, err := s.operator.SearchPlayers(r.Context(), q)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adminPlayers(q, ps))
}

func (s *Server) adminPlayerPage(w http.ResponseWriter, r *http.Request) {
	id, err := playerID(r)
	var p store.PlayerDetail
	if err == nil {
		p, err = s.operator.Player(r.Context(), id)
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adminPlayer(p, canModerate(identity(r.Context()))))
}

func scoreWord(score int) string {
	if score > 0 {
		return "liked"
	}
	return "disliked"
}
