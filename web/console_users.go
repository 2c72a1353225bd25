package web

import (
	"context"
	"net/http"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// ConsoleUsers are the console's named tokens (PROTOCOL.md "Operator,
// continued"), kept by the Operator. Only the root token manages them.
type ConsoleUsers interface {
	// ConsoleUser returns the unrevoked console user whose token hashes
	// to tokenHash, or an ENOTFOUND error.
	ConsoleUser(ctx context.Context, tokenHash []byte) (store.ConsoleUser, error)
	ConsoleUsers(ctx context.Context) ([]store.ConsoleUser, error)
	// CreateConsoleUser makes a user with a new token, returned once.
	CreateConsoleUser(ctx context.Context, name, role, by string) (store.ConsoleUser, string, error)
	RevokeConsoleUser(ctx context.Context, id, by string) error
}

// consoleUser looks tok up among the console users.
func (s *Server) consoleUser(r *http.Request, tok string) (consoleIdentity, bool) {
	if s.operator == nil || len(tok) > 512 {
		return consoleIdentity{}, false
	}
	u, err := s.operator.ConsoleUser(r.Context(), hashToken(tok))
	if err != nil {
		if engine.ErrorCode(err) != engine.ENOTFOUND {
			s.log.Error("admin: console user lookup", "err", err)
		}
		return consoleIdentity{}, false
	}
	return consoleIdentity{Name: u.Name, Role: u.Role}, true
}

func (s *Server) userRoutes(hf func(pattern string, h http.HandlerFunc), a func(http.HandlerFunc) http.HandlerFunc) {
	root := func(h http.HandlerFunc) http.HandlerFunc { return a(s.rootOnly(h)) }
	hf("GET /api/admin/users", root(s.apiUsers))
	hf("POST /api/admin/users", root(s.apiCreateUser))
	hf("DELETE /api/admin/users/{uid}", root(s.apiRevokeUser))
	hf("GET /admin/users", root(s.adminUsersPage))
	hf("POST /admin/users", root(s.pageCreateUser))
	hf("POST /admin/users/{uid}/revoke", root(s.pageRevokeUser))
}

type createUserRequest struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

type createUserResponse struct {
	store.ConsoleUser
	Token string `json:"token"`
}

func checkRole(role string) error {
	if role != RoleViewer && role != RoleModerator {
		return badRequest(`role: want "viewer" or "moderator".`)
	}
	return nil
}

func (s *Server) createUser(r *http.Request, name, role string) (store.ConsoleUser, string, error) {
	name, err := engine.CleanName("name", name, engine.MaxNameLen)
	if err != nil {
		return store.ConsoleUser{}, "", err
	}
	if err := checkRole(role); err != nil {
		return store.ConsoleUser{}, "", err
	}
	by := actorName(r.Context())
	u, tok, err := s.operator.CreateConsoleUser(r.Context(), name, role, by)
	if err == nil {
		s.log.Info("console user made", "user", u.ID, "name", u.Name, "role", u.Role, "by", by)
	}
	return u, tok, err
}

// apiCreateUser is POST /api/admin/users {"name", "role"} → 201 {"id",
// "name", "role", …, "token"}: the token is shown this once.
func (s *Server) apiCreateUser(w http.ResponseWriter, r *http.Request) {
	var req createUserRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	u, tok, err := s.createUser(r, req.Name, req.Role)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, createUserResponse{ConsoleUser: u, Token: tok})
}

func (s *Server) apiUsers(w http.ResponseWriter, r *http.Request) {
	us, err := s.operator.ConsoleUsers(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": us})
}

func (s *Server) revokeUser(r *http.Request) error {
	id := r.PathValue("uid")
	if id == "" || len(id) > 64 {
		return &apiError{code: hub.CodeNotFound, message: "No such console user."}
	}
	by := actorName(r.Context())
	if err := s.operator.RevokeConsoleUser(r.Context(), id, by); err != nil {
		return err
	}
	s.log.Info("console user revoked", "user", id, "by", by)
	return nil
}

func (s *Server) apiRevokeUser(w http.ResponseWriter, r *http.Request) {
	if err := s.revokeUser(r); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) adminUsersPage(w http.ResponseWriter, r *http.Request) {
	s.renderUsers(w, r, http.StatusOK, nil, "")
}

func (s *Server) renderUsers(w http.ResponseWriter, r *http.Request, st int, made *store.ConsoleUser, token string) {
	us, err := s.operator.ConsoleUsers(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, st, adminUsers(us, made, token))
}

// pageCreateUser shows the new token on the page it answers with, once;
// the page is not cached (render sets no-store for admin pages).
func (s *Server) pageCreateUser(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	u, tok, err := s.createUser(r, r.FormValue("name"), r.FormValue("role"))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.renderUsers(w, r, http.StatusCreated, &u, tok)
}

func (s *Server) pageRevokeUser(w http.ResponseWriter, r *http.Request) {
	if err := s.revokeUser(r); err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/users", http.StatusSeeOther)
}
