package web

import (
	"net/http"

	"tavern/adventures"
	"tavern/internal/engine"
)

// adventuresPage is GET /adventures.
func (s *Server) adventuresPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.adventures.List(r.Context())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adventuresListPage(adventuresView{Player: s.pagePlayer(r), List: list, Version: s.assetVersion}))
}

// newAdventurePage is GET /adventures/new: the editor, starting from the
// small example of docs/adventures.md.
func (s *Server) newAdventurePage(w http.ResponseWriter, r *http.Request) {
	v := editorView{Player: s.pagePlayer(r), Source: string(adventures.Starter()), Version: s.assetVersion}
	s.render(w, r, http.StatusOK, editorPage(v))
}

// editAdventurePage is GET /adventures/{id}/edit: its author saves over
// it; anyone else may play or fork it.
func (s *Server) editAdventurePage(w http.ResponseWriter, r *http.Request) {
	p := s.pagePlayer(r)
	e, err := s.adventures.Entry(r.Context(), r.PathValue("id"))
	if err == nil && e.Hidden && (p == nil || p.ID != e.AuthorID) {
		// Its author may still open it, and show it again by saving.
		err = engine.Errorf(engine.ENOTFOUND, "No adventure %q.", r.PathValue("id"))
	}
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := editorView{Player: p, ID: e.ID, Title: e.Title, Source: e.Source, Version: s.assetVersion,
		Mine: p != nil && e.AuthorID != "" && p.ID == e.AuthorID}
	s.render(w, r, http.StatusOK, editorPage(v))
}

func (s *Server) pagePlayer(r *http.Request) *engine.Player {
	p, err := s.player(r, false)
	if err != nil {
		s.log.Error("page: resolve player", "path", r.URL.Path, "err", err)
	}
	return p
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, err error) {
	st, _, msg := status(err)
	if st >= 500 {
		s.log.Error("page", "path", r.URL.Path, "err", err)
	}
	s.render(w, r, st, errorPage(st, msg, s.assetVersion))
}
