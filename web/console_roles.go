package web

import (
	"context"
	"net/http"

	"tavern/internal/hub"
)

// Console roles (PROTOCOL.md "Operator, continued"): the root token of
// TAVERN_ADMIN_TOKEN may do everything; a moderator also moderates and
// asks; a viewer reads the pages and the read-only API.
const (
	RoleRoot      = "root"
	RoleModerator = "moderator"
	RoleViewer    = "viewer"
)

// consoleIdentity is who signed in to the console.
type consoleIdentity struct {
	Name, Role string
}

type identityKey struct{}

func withIdentity(ctx context.Context, id consoleIdentity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// identity returns who the request signed in as (set by adminOnly); the
// zero identity, with no role, when nothing did: a route left unwrapped by
// mistake must grant nothing.
func identity(ctx context.Context) consoleIdentity {
	id, _ := ctx.Value(identityKey{}).(consoleIdentity)
	return id
}

// actorName names who acted, for moderation events and log lines.
func actorName(ctx context.Context) string { return identity(ctx).Name }

// errViewerOnly answers a viewer's moderation request.
var errViewerOnly = &apiError{code: hub.CodeForbidden, message: "Your console role (viewer) may read, not moderate."}

// errRootOnly answers a request only the root token may make.
var errRootOnly = &apiError{code: hub.CodeForbidden, message: "Only the root admin token may do this."}

// errNoRole answers a request that reached a role check unsigned.
var errNoRole = &apiError{code: hub.CodeForbidden, message: "This needs a console role."}

// canModerate reports whether id may moderate: root and moderators.
func canModerate(id consoleIdentity) bool { return id.Role == RoleRoot || id.Role == RoleModerator }

// moderator lets through moderators and root; a viewer, or a request
// without an identity, gets 403.
func (s *Server) moderator(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if id := identity(r.Context()); !canModerate(id) {
			e := errNoRole
			if id.Role == RoleViewer {
				e = errViewerOnly
			}
			s.refuseRole(w, r, e)
			return
		}
		h(w, r)
	}
}

// rootOnly lets through the root token only.
func (s *Server) rootOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if identity(r.Context()).Role != RoleRoot {
			s.refuseRole(w, r, errRootOnly)
			return
		}
		h(w, r)
	}
}

func (s *Server) refuseRole(w http.ResponseWriter, r *http.Request, e *apiError) {
	s.log.Warn("admin: refused by role", "by", actorName(r.Context()), "method", r.Method, "path", r.URL.Path)
	if isAPI(r) {
		s.error(w, r, e)
		return
	}
	s.render(w, r, http.StatusForbidden, adminError(http.StatusForbidden, e.message, "/admin"))
}
