package web

import (
	"io/fs"
	"net/http"
	"strings"

	"tavern/internal/hub"
)

// routes registers every route on a Go 1.22 ServeMux. Each route is
// instrumented under its pattern.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern string, h http.Handler) {
		mux.Handle(pattern, s.metrics.instrument(pattern, h))
	}
	hf := func(pattern string, h http.HandlerFunc) { handle(pattern, h) }

	// The API of PROTOCOL.md.
	hf("POST /api/players", s.createPlayer)
	hf("GET /api/players/me", s.authed(s.me))
	hf("GET /api/tables", s.listTables)
	hf("POST /api/tables", s.authed(s.createTable))
	hf("GET /api/tables/{id}", s.getTable)
	hf("POST /api/tables/{id}/seats", s.authed(s.sit))
	hf("DELETE /api/tables/{id}/seats/me", s.authed(s.leave))
	hf("GET /api/tables/{id}/events", s.events)
	hf("GET /api/tables/{id}/stream", s.stream)
	hf("GET /api/tables/{id}/story", s.story) // the story as a file (web/story.go)
	// The living world (web/world.go).
	hf("POST /api/tables/{id}/session", s.authed(s.startSession))
	hf("GET /api/tables/{id}/quests", s.quests)
	hf("GET /api/tables/{id}/inventory", s.authed(s.inventory))
	// The DM's records, for the table's owner: web/memory.go.
	hf("GET /api/tables/{id}/memories", s.authed(s.listMemories))
	hf("GET /api/tables/{id}/memories/search", s.authed(s.searchMemories))
	hf("GET /api/tables/{id}/memories/{session}", s.authed(s.getSession))
	hf("POST /api/tables/{id}/memories/{session}/summarize", s.authed(s.summarizeSession))
	hf("GET /api/tables/{id}/export/{file}", s.authed(s.exportHistory))
	hf("GET /api/tables/{id}/calls", s.authed(s.listCalls))
	hf("GET /ws/tables/{id}", s.websocket)
	// The table owner's (web/owners.go).
	s.ownerRoutes(hf)
	// Notes, retcon, edits and feedback (web/notes.go).
	s.notesRoutes(hf)
	// Ask the data: the operator's data agent, web/ask.go.
	s.askRoutes(func(pattern string, h http.HandlerFunc) { hf(pattern, s.adminOnly(h)) })
	// Adventures players write: web/adventures.go.
	s.adventureRoutes(hf)
	// Anything else under /api gets a JSON error, not the HTML 404: 405 if
	// the path exists with other methods.
	hf("/api/", func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			r2 := r.Clone(r.Context())
			r2.Method = m
			if _, p := mux.Handler(r2); p != "" && p != "/api/" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.error(w, r, &apiError{status: http.StatusMethodNotAllowed, code: hub.CodeBadRequest, message: "Method not allowed; use " + strings.Join(allow, ", ") + "."})
			return
		}
		s.error(w, r, &apiError{code: hub.CodeNotFound, message: "No such endpoint."})
	})

	// Pages.
	hf("GET /{$}", s.lobbyPage)
	hf("GET /tables/{id}", s.tablePage)
	handle("GET /static/", s.static())
	hf("/", s.notFoundPage)

	// Operations.
	hf("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	hf("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		// Not ready: starting, shutting down, or the store cannot write
		// (a full disk), with the reason for whoever looks.
		if err := s.hub.Health(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	handle("GET /metrics", s.adminOnly(s.metrics.handler.ServeHTTP))
	// The operator's console (web/admin*.go).
	s.adminRoutes(hf)

	// Cookies are SameSite=Lax already; this also refuses state changes
	// from other origins of the same site (Sec-Fetch-Site / Origin).
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.error(w, r, &apiError{code: hub.CodeForbidden, message: "Cross-origin request refused."})
	}))
	return securityHeaders(s.limitHeaders(cop.Handler(mux)))
}

// static serves the embedded files. URLs carrying the current asset
// version are immutable; others must revalidate.
func (s *Server) static() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embed directive guarantees the directory
	}
	files := http.StripPrefix("/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		if r.URL.Query().Get("v") == s.assetVersion {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		files.ServeHTTP(w, r)
	})
}

// securityHeaders sets headers every response gets. The CSP allows only
// our own scripts and styles: data never runs as code.
func securityHeaders(h http.Handler) http.Handler {
	const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}
