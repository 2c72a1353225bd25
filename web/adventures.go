package web

import (
	"context"
	"io"
	"mime"
	"net/http"
	"strings"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/hub"
)

// Adventures is the shelf of adventures the API and pages serve
// (PROTOCOL.md "Adventures"); *adventures.Shelf satisfies it. Errors are
// *engine.Error; problems are a source's mistakes, not errors.
type Adventures interface {
	List(ctx context.Context) ([]adventures.Entry, error)
	// Titles is List without the numbers of tables.
	Titles(ctx context.Context) ([]adventures.Entry, error)
	Entry(ctx context.Context, id string) (adventures.Entry, error)
	Validate(src []byte) []adventures.Problem
	Create(ctx context.Context, author engine.Player, src []byte, forkedFrom string) (adventures.Entry, []adventures.Problem, error)
	Replace(ctx context.Context, p engine.Player, id string, src []byte) (adventures.Entry, []adventures.Problem, error)
	Hide(ctx context.Context, p engine.Player, id string) error
	Fork(ctx context.Context, p engine.Player, id string) (adventures.Entry, error)
}

// adventureRoutes registers the shelf's routes, none but the schema when
// there is no shelf: its handlers may then count on s.adventures.
func (s *Server) adventureRoutes(hf func(string, http.HandlerFunc)) {
	hf("GET /api/adventures/schema.json", s.adventureSchema)
	if s.adventures == nil {
		return
	}
	hf("GET /api/adventures", s.listAdventures)
	hf("POST /api/adventures", s.authed(s.createAdventure))
	hf("POST /api/adventures/validate", s.validateAdventure)
	hf("GET /api/adventures/{id}", s.getAdventure)
	hf("PUT /api/adventures/{id}", s.authed(s.replaceAdventure))
	hf("DELETE /api/adventures/{id}", s.authed(s.hideAdventure))
	hf("POST /api/adventures/{id}/fork", s.authed(s.forkAdventure))
	hf("GET /adventures", s.adventuresPage)
	hf("GET /adventures/new", s.newAdventurePage)
	hf("GET /adventures/{id}/edit", s.editAdventurePage)
}

// The editor checks a source as its author types, a request a second at
// most when typing fast (static/editor.js waits for a pause).
const validatesPerMinute, validatesBurst = 120, 30

// problemsBody is the 400 answer of a source with mistakes: the error
// body with every problem.
type problemsBody struct {
	Error struct {
		Code     string               `json:"code"`
		Message  string               `json:"message"`
		Problems []adventures.Problem `json:"problems"`
	} `json:"error"`
}

func writeProblems(w http.ResponseWriter, problems []adventures.Problem) {
	var b problemsBody
	b.Error.Code = hub.CodeBadRequest
	b.Error.Message = "The adventure has mistakes; each problem says where and how to fix it."
	if len(problems) == 1 {
		b.Error.Message = "The adventure has a mistake: " + problems[0].Message
	}
	b.Error.Problems = problems
	writeJSON(w, http.StatusBadRequest, b)
}

// readYAML reads an adventure's source: at most one byte over the limit,
// so that Parse can say it is too large.
func readYAML(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !strings.HasSuffix(mt, "yaml") && mt != "text/plain" {
			return nil, badRequest("Content-Type must be application/yaml.")
		}
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, adventures.MaxBytes+1))
	if err != nil {
		return nil, badRequest("The request body could not be read.")
	}
	return b, nil
}

func (s *Server) adventureSchema(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/schema+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(adventures.Schema())
}

func (s *Server) listAdventures(w http.ResponseWriter, r *http.Request) {
	list, err := s.adventures.List(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if list == nil {
		list = []adventures.Entry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"adventures": list})
}

func (s *Server) getAdventure(w http.ResponseWriter, r *http.Request) {
	e, err := s.adventures.Entry(r.Context(), r.PathValue("id"))
	if err == nil && e.Hidden {
		err = engine.Errorf(engine.ENOTFOUND, "No adventure %q.", r.PathValue("id"))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, e)
}

// validateAdventure is the editor's check as you type: the problems of a
// source, stored nowhere. It has a quota of its own, more generous than
// creation's.
func (s *Server) validateAdventure(w http.ResponseWriter, r *http.Request) {
	if s.allow(w, r, s.validateQuota, "checks") == nil {
		return
	}
	src, err := readYAML(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	problems := s.adventures.Validate(src)
	if problems == nil {
		problems = []adventures.Problem{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"problems": problems})
}

func (s *Server) createAdventure(w http.ResponseWriter, r *http.Request, p engine.Player) {
	src, err := readYAML(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	refund := s.allow(w, r, s.adventureQuota, "adventures")
	if refund == nil {
		return
	}
	e, problems, err := s.adventures.Create(r.Context(), p, src, "")
	s.stored(w, r, http.StatusCreated, e, problems, err, refund)
}

func (s *Server) replaceAdventure(w http.ResponseWriter, r *http.Request, p engine.Player) {
	src, err := readYAML(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	refund := s.allow(w, r, s.adventureQuota, "adventures")
	if refund == nil {
		return
	}
	e, problems, err := s.adventures.Replace(r.Context(), p, r.PathValue("id"), src)
	s.stored(w, r, http.StatusOK, e, problems, err, refund)
}

func (s *Server) forkAdventure(w http.ResponseWriter, r *http.Request, p engine.Player) {
	refund := s.allow(w, r, s.adventureQuota, "adventures")
	if refund == nil {
		return
	}
	e, err := s.adventures.Fork(r.Context(), p, r.PathValue("id"))
	s.stored(w, r, http.StatusCreated, e, nil, err, refund)
}

// stored answers a create, replace or fork; a refused one gives its quota
// token back.
func (s *Server) stored(w http.ResponseWriter, r *http.Request, st int, e adventures.Entry, problems []adventures.Problem, err error, refund func()) {
	switch {
	case err != nil:
		if c := engine.ErrorCode(err); c != engine.EINTERNAL && c != engine.EUNAVAILABLE {
			refund()
		}
		s.error(w, r, err)
	case len(problems) > 0:
		refund()
		writeProblems(w, problems)
	default:
		if st == http.StatusCreated {
			w.Header().Set("Location", "/api/adventures/"+e.ID)
		}
		writeJSON(w, st, e)
	}
}

func (s *Server) hideAdventure(w http.ResponseWriter, r *http.Request, p engine.Player) {
	if err := s.adventures.Hide(r.Context(), p, r.PathValue("id")); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
