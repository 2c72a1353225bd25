package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"tavern/internal/hub"
)

// adminCookie is the operator's cookie of PROTOCOL.md "Operator (admin)".
// It is HttpOnly and SameSite=Strict: a page of another site can neither
// read it nor make the browser send it.
const adminCookie = "tavern_admin"

// adminCSRF checks state-changing admin requests: only the same origin (or
// a non-browser client, which sends neither Sec-Fetch-Site nor Origin) may
// pause, kick or close. SameSite=Strict keeps the cookie off cross-site
// requests already; this also refuses other origins of the same site.
var adminCSRF = http.NewCrossOriginProtection()

// errAdminUnauthorized answers an API request without the admin token.
var errAdminUnauthorized = &apiError{code: hub.CodeUnauthorized,
	message: "This needs the admin token (cookie tavern_admin or Authorization: Bearer)."}

// errAdminCrossOrigin answers a state change from another origin.
var errAdminCrossOrigin = &apiError{code: hub.CodeForbidden, message: "Cross-origin request refused."}

// versionKey carries the static files' version to the admin templates,
// whose layout takes only a title and the active nav entry.
type versionKey struct{}

// assetVersion returns the static files' version set by adminOnly, or "".
func assetVersion(ctx context.Context) string {
	v, _ := ctx.Value(versionKey{}).(string)
	return v
}

// isAdmin reports whether tok is the admin token. Only the token's hash is
// kept; the comparison of hashes is constant-time. With no admin token
// configured nobody is the operator.
func (s *Server) isAdmin(tok string) bool {
	if s.adminHash == nil || tok == "" || len(tok) > 512 {
		return false
	}
	h := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(h[:], s.adminHash) == 1
}

// Wrong admin tokens are throttled per client address, so the token
// cannot be guessed at the speed of the network: adminTryBurst wrong
// tokens at once, then one each adminTryEvery, counted in a quota bucket
// per address like the creation quotas (quota.go).
const (
	adminTryBurst = 10
	adminTryEvery = 6 * time.Second
)

// errAdminThrottled answers a token from an address out of tries.
var errAdminThrottled = &apiError{code: hub.CodeRateLimited,
	message: "Too many wrong admin tokens from your address; retry in " + strconv.Itoa(int(adminTryEvery/time.Second)) + " s."}

// admitAdmin reports whether tok is the admin token or a console user's
// (PROTOCOL.md "Operator, continued"), and who it is. The token is checked
// first: a right one always passes, so a guesser sharing the operator's
// address (a NAT) cannot lock the operator out. Only a wrong token costs
// the address a try; once none is left it is answered 429 here, and
// answered is true. No token costs nothing (a visit to the sign-in form).
func (s *Server) admitAdmin(w http.ResponseWriter, r *http.Request, tok string) (id consoleIdentity, ok, answered bool) {
	if tok == "" {
		return id, false, false
	}
	if s.isAdmin(tok) {
		return consoleIdentity{Name: RoleRoot, Role: RoleRoot}, true, false
	}
	if u, found := s.consoleUser(r, tok); found {
		return u, true, false
	}
	if refund, _ := s.adminTries.take(clientAddr(r)); refund == nil {
		s.log.Warn("admin: token throttled", "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", strconv.Itoa(int(adminTryEvery/time.Second)))
		s.error(w, r, errAdminThrottled)
		return id, false, true
	}
	return id, false, false
}

// adminToken returns the admin token a request carries: the bearer header,
// else the tavern_admin cookie.
func adminToken(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, tok, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if c, err := r.Cookie(adminCookie); err == nil {
		return c.Value
	}
	return ""
}

// isAPI reports whether a path answers JSON (or Prometheus text) rather
// than pages: a refusal there is a 401 body, not a sign-in form.
func isAPI(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/metrics"
}

// adminOnly wraps a handler of the operator's: pages, the admin API and
// /metrics. Without the admin token an API request gets 401 and a page
// the sign-in form; a state-changing request (anything but GET and HEAD)
// must also come from the same origin.
func (s *Server) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), versionKey{}, s.assetVersion))
		id, ok, answered := s.admitAdmin(w, r, adminToken(r))
		if answered {
			return
		}
		if !ok {
			if isAPI(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="tavern-admin"`)
				s.error(w, r, errAdminUnauthorized)
				return
			}
			next := r.URL.RequestURI()
			if r.Method != http.MethodGet {
				next = "/admin"
			}
			s.render(w, r, http.StatusUnauthorized, adminSignIn(next, r.Header.Get("Authorization") != "" || hasCookie(r, adminCookie)))
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if err := adminCSRF.Check(r); err != nil {
				s.log.Warn("admin: cross-origin request refused", "method", r.Method, "path", r.URL.Path)
				if isAPI(r) {
					s.error(w, r, errAdminCrossOrigin)
				} else {
					s.render(w, r, http.StatusForbidden, errorPage(http.StatusForbidden, errAdminCrossOrigin.message, s.assetVersion))
				}
				return
			}
		}
		r = r.WithContext(withIdentity(hub.WithActor(r.Context(), id.Name), id))
		h(w, s.withAlerts(r))
	}
}

func hasCookie(r *http.Request, name string) bool {
	c, err := r.Cookie(name)
	return err == nil && c.Value != ""
}

// adminEntry is GET /admin: with ?token= it exchanges the token for the
// cookie and redirects to /admin (so the token leaves the address bar and
// the history); otherwise it is the overview, behind adminOnly.
func (s *Server) adminEntry(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		s.signIn(w, r, tok, "/admin")
		return
	}
	s.adminOnly(s.adminOverviewPage)(w, r)
}

// adminLogin is POST /admin/login, the sign-in form: token and next.
func (s *Server) adminLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		s.error(w, r, badRequest("Bad form."))
		return
	}
	s.signIn(w, r, r.PostForm.Get("token"), r.PostForm.Get("next"))
}

// signIn sets the admin cookie when tok is the admin token and redirects
// to next (a path under /admin only: no open redirect), else shows the
// sign-in form again with 401.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, tok, next string) {
	r = r.WithContext(context.WithValue(r.Context(), versionKey{}, s.assetVersion))
	_, ok, answered := s.admitAdmin(w, r, tok)
	if answered {
		return
	}
	if !ok {
		s.log.Warn("admin: sign-in refused", "remote", r.RemoteAddr)
		s.render(w, r, http.StatusUnauthorized, adminSignIn(safeNext(next), true))
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     adminCookie,
		Value:    tok,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
	})
	s.log.Info("admin: signed in", "remote", r.RemoteAddr)
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

// adminLogout is POST /admin/logout: it clears the cookie.
func (s *Server) adminLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: adminCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/admin", http.StatusSeeOther)
}

// safeNext keeps a redirect target on this server's admin pages.
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !(u.Path == "/admin" || strings.HasPrefix(u.Path, "/admin/")) ||
		strings.Contains(next, "\\") || strings.HasPrefix(next, "//") {
		return "/admin"
	}
	q := u.Query()
	q.Del("token")
	u.RawQuery = q.Encode()
	return u.RequestURI()
}
