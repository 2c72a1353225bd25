package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// The routes of PROTOCOL.md "Undo, notes and the owner's word to the DM":
// notes, retcon, narration edits and feedback. The rules live in the hub
// (internal/hub notes.go, retcon.go, whisper.go); this file reads the
// requests and maps the answers.

// ownerHub is the part of *hub.Hub behind these routes.
type ownerHub interface {
	Notes(ctx context.Context, tableID string) ([]hub.NoteView, error)
	AddNote(ctx context.Context, tableID string, p engine.Player, text string) (hub.NoteView, error)
	RemoveNote(ctx context.Context, tableID string, p engine.Player, noteID string) error
	IsOwner(tableID, playerID string) bool
	Retcon(ctx context.Context, tableID string, p engine.Player, then string) (hub.RetconResult, error)
	EditNarration(ctx context.Context, tableID string, p engine.Player, seq int64, text string) (engine.EditData, error)
	Feedback(ctx context.Context, tableID string, p engine.Player, seq int64, score int, comment string) error
	FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error)
}

// ownerRoutes registers the routes of this file.
func (s *Server) notesRoutes(hf func(pattern string, h http.HandlerFunc)) {
	hf("GET /api/tables/{id}/notes", s.listNotes)
	hf("POST /api/tables/{id}/notes", s.authed(s.addNote))
	hf("DELETE /api/tables/{id}/notes/{note}", s.authed(s.removeNote))
	hf("POST /api/tables/{id}/retcon", s.authed(s.retcon))
	hf("POST /api/tables/{id}/events/{seq}/edit", s.authed(s.editNarration))
	hf("POST /api/tables/{id}/events/{seq}/feedback", s.authed(s.feedback))
}

// owners returns the hub's owner side and the table id, or writes the
// error: a private table's stranger gets its 404 here, as on every route.
func (s *Server) owners(w http.ResponseWriter, r *http.Request) (ownerHub, string, bool) {
	id, ok := s.visibleTable(w, r)
	if !ok {
		return nil, "", false
	}
	return s.hub, id, true
}

type notesResponse struct {
	Notes []hub.NoteView `json:"notes"`
	// Owner: the caller owns the table (additive: the page shows the
	// owner's controls).
	Owner bool `json:"owner"`
}

// listNotes: GET /api/tables/{id}/notes → {"notes": [Note]}, oldest first.
func (s *Server) listNotes(w http.ResponseWriter, r *http.Request) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	notes, err := oh.Notes(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	res := notesResponse{Notes: notes}
	if p, err := s.player(r, false); err == nil && p != nil {
		res.Owner = oh.IsOwner(id, p.ID)
	}
	writeJSON(w, http.StatusOK, res)
}

type textRequest struct {
	Text string `json:"text"`
}

// addNote: POST /api/tables/{id}/notes {"text"} → 201 Note.
func (s *Server) addNote(w http.ResponseWriter, r *http.Request, p engine.Player) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	var req textRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	n, err := oh.AddNote(r.Context(), id, p, req.Text)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, n)
}

// removeNote: DELETE /api/tables/{id}/notes/{note} → 204.
func (s *Server) removeNote(w http.ResponseWriter, r *http.Request, p engine.Player) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	note := r.PathValue("note")
	if note == "" || len(note) > 64 {
		s.error(w, r, &apiError{code: hub.CodeNotFound, message: "No such note."})
		return
	}
	if err := oh.RemoveNote(r.Context(), id, p, note); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// retcon: POST /api/tables/{id}/retcon {"then": "retry"|"drop"} → 200
// {"turn","from_seq","to_seq"}.
func (s *Server) retcon(w http.ResponseWriter, r *http.Request, p engine.Player) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	var req struct {
		Then string `json:"then"`
	}
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	res, err := oh.Retcon(r.Context(), id, p, req.Then)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// eventSeq reads the {seq} of an event route: 404 unless a positive
// integer.
func eventSeq(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue("seq"), 10, 64)
	if err != nil || n <= 0 {
		return 0, &apiError{code: hub.CodeNotFound, message: "No such event."}
	}
	return n, nil
}

// editNarration: POST /api/tables/{id}/events/{seq}/edit {"text"} → 200
// {"seq","text","by"}.
func (s *Server) editNarration(w http.ResponseWriter, r *http.Request, p engine.Player) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	seq, err := eventSeq(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req textRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	d, err := oh.EditNarration(r.Context(), id, p, seq, req.Text)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// feedback: POST /api/tables/{id}/events/{seq}/feedback {"score": 1|-1,
// "comment"?} → 204.
func (s *Server) feedback(w http.ResponseWriter, r *http.Request, p engine.Player) {
	oh, id, ok := s.owners(w, r)
	if !ok {
		return
	}
	seq, err := eventSeq(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req struct {
		Score   int    `json:"score"`
		Comment string `json:"comment"`
	}
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if err := oh.Feedback(r.Context(), id, p, seq, req.Score, req.Comment); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
