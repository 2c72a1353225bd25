package web

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/a-h/templ"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// lobbyView is what the lobby page shows.
type lobbyView struct {
	Player *engine.Player
	Tables []hub.TableSummary
	Mine   []hub.MyTable // the tables the player owns or sits at
	DM     string
	// Adventures are the ones a new table may be made from; Chosen the
	// one picked already (?adventure= from the adventures page).
	Adventures []adventureChoice
	Chosen     string
	Version    string
}

// adventureChoice is one adventure of the lobby's create form.
type adventureChoice struct{ ID, Title string }

// tableView is what the table page shows.
type tableView struct {
	Snap    hub.Snapshot
	Player  *engine.Player
	Me      *hub.Character // your character; nil for spectators
	Classes []engine.Class
	Version string
	// Watch is set when a seated player asked to watch as a spectator.
	Watch bool
	// Invite is the invite code the page was opened with, which its
	// requests carry on (a private table).
	Invite string
}

// Role is "player" when you are seated (and not watching), else
// "spectator": the websocket role table.js asks for.
func (v tableView) Role() string {
	if v.Me != nil {
		return "player"
	}
	return "spectator"
}

// IsOwner reports whether the viewer owns the table (its owner's card).
func (v tableView) IsOwner() bool {
	return v.Player != nil && v.Snap.Table.OwnerID != "" && v.Snap.Table.OwnerID == v.Player.ID
}

// Seat is your seat id, or "".
func (v tableView) Seat() string {
	if v.Me != nil {
		return v.Me.Seat
	}
	return ""
}

// CanSit reports whether the "take a seat" form is shown.
func (v tableView) CanSit() bool {
	if v.Me != nil || v.Watch {
		return false
	}
	return v.Snap.Table.Seats == 0 || len(v.Snap.Party) < v.Snap.Table.Seats
}

// render writes c as an HTML page with status st.
func (s *Server) render(w http.ResponseWriter, r *http.Request, st int, c templ.Component) {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		s.log.Error("render page", "path", r.URL.Path, "err", err)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(st)
	_, _ = w.Write(buf.Bytes())
}

// lobbyPage is GET /.
func (s *Server) lobbyPage(w http.ResponseWriter, r *http.Request) {
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("lobby: resolve player", "err", err)
	}
	pid := ""
	if p != nil {
		pid = p.ID
	}
	v := lobbyView{Player: p, Tables: s.hub.ListFor(r.Context(), pid), DM: s.hub.DM(), Adventures: s.adventureChoices(r), Chosen: r.URL.Query().Get("adventure"), Version: s.assetVersion}
	if p != nil {
		if v.Mine, err = s.hub.MyTables(r.Context(), p.ID); err != nil {
			s.log.Error("lobby: the player's tables", "err", err)
		}
	}
	s.render(w, r, http.StatusOK, lobbyPage(v))
}

// adventureChoices lists the adventures by title when the shelf is
// served, else by id.
func (s *Server) adventureChoices(r *http.Request) []adventureChoice {
	var out []adventureChoice
	if s.adventures != nil {
		if list, err := s.adventures.Titles(r.Context()); err == nil {
			for _, e := range list {
				out = append(out, adventureChoice{e.ID, e.Title})
			}
			return out
		}
	}
	for _, id := range s.hub.AdventureIDs() {
		out = append(out, adventureChoice{id, id})
	}
	return out
}

// tablePage is GET /tables/{id}; ?watch=1 shows a seated player the
// spectator view.
func (s *Server) tablePage(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	var snap hub.Snapshot
	var viewer hub.Viewer
	if err == nil {
		viewer, _, err = s.viewer(r, false)
	}
	if err == nil {
		err = s.hub.Visible(r.Context(), id, viewer)
	}
	if err == nil {
		snap, err = s.hub.Snapshot(r.Context(), id)
	}
	if err != nil {
		st, _, msg := status(err)
		if st >= 500 {
			s.log.Error("table page", "table", id, "err", err)
		}
		s.render(w, r, st, errorPage(st, msg, s.assetVersion))
		return
	}
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("table page: resolve player", "err", err)
	}
	v := tableView{Snap: snap, Player: p, Classes: s.hub.Classes(), Version: s.assetVersion, Watch: r.URL.Query().Has("watch"),
		Invite: viewer.Invite}
	if p != nil && !v.Watch {
		for i := range snap.Party {
			if snap.Party[i].PlayerID == p.ID {
				v.Me = &snap.Party[i]
				break
			}
		}
	}
	s.render(w, r, http.StatusOK, tablePage(v))
}

// notFoundPage answers every path no route matches.
func (s *Server) notFoundPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusNotFound, errorPage(http.StatusNotFound, "There is nothing here.", s.assetVersion))
}

// --- view helpers shared by the templates ---

// dmLabel describes which game master runs.
func dmLabel(dm string) string {
	if dm == "" || dm == "offline" {
		return "offline rules narrator"
	}
	return dm
}

// hpText is "hp/max".
func hpText(hp, max int) string { return strconv.Itoa(hp) + "/" + strconv.Itoa(max) }

// optInt renders an optional number, or "".
func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// modeWord names a table mode for people: exploring or fighting (the
// wire's "narrative" also names a combat style, so the page never shows it).
func modeWord(mode string) string {
	if mode == engine.ModeCombat {
		return "fighting"
	}
	return "exploring"
}

// combatStyle names a table's combat mode for people: "turn-based"
// (tactical: initiative turns) or "free" (narrative: anyone acts).
func combatStyle(mode string) string {
	if mode == engine.CombatNarrative {
		return "free"
	}
	return "turn-based"
}

func combatStyleHelp(mode string) string {
	if mode == engine.CombatNarrative {
		return "Free combat: anyone may act; the DM resolves the fight as it goes."
	}
	return "Turn-based combat: initiative order, one turn at a time."
}

// difficultyText says how hard a table's fights are for its party: the
// encounters are written for three level-1 characters and scaled to the
// party (the engine scales each fight).
func difficultyText(t hub.TableSummary) string {
	switch {
	case t.Seated == 0:
		return "moderate; scales to the party"
	case t.Seated < 3:
		return "moderate; scaled down for " + strconv.Itoa(t.Seated)
	case t.Seated == 3:
		return "moderate"
	}
	return "moderate; scaled up for " + strconv.Itoa(t.Seated)
}
