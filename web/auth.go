package web

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// cookieName is the player cookie of PROTOCOL.md "Identity".
const cookieName = "tavern_player"

// cookieMaxAge keeps a player's identity across browser restarts.
const cookieMaxAge = 365 * 24 * time.Hour

// hashToken is what the store keeps instead of the token.
func hashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// requestToken returns the token a request carries: the bearer header
// first, then the cookie, then (websocket only, when query is set) the
// ?token= parameter. It returns "" if there is none.
func requestToken(r *http.Request, query bool) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if scheme, tok, ok := strings.Cut(a, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok)
		}
	}
	if c, err := r.Cookie(cookieName); err == nil && c.Value != "" {
		return c.Value
	}
	if query {
		return r.URL.Query().Get("token")
	}
	return ""
}

// player resolves the request's player. It returns (nil, nil) when the
// request carries no token or an unknown one, and an error only when the
// store fails.
func (s *Server) player(r *http.Request, query bool) (*engine.Player, error) {
	tok := requestToken(r, query)
	if tok == "" || len(tok) > 512 {
		return nil, nil
	}
	p, err := s.players.PlayerByTokenHash(r.Context(), hashToken(tok))
	if engine.ErrorCode(err) == engine.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// errUnauthorized is the answer to a request that needs a player.
var errUnauthorized = &apiError{code: hub.CodeUnauthorized,
	message: "Pick a name first: this needs a player token (cookie tavern_player or Authorization: Bearer)."}

// authed wraps a handler that needs a player.
func (s *Server) authed(h func(w http.ResponseWriter, r *http.Request, p engine.Player)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.player(r, false)
		if err != nil {
			s.error(w, r, err)
			return
		}
		if p == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tavern"`)
			s.error(w, r, errUnauthorized)
			return
		}
		h(w, r, *p)
	}
}

// setPlayerCookie remembers token in the browser.
func setPlayerCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    token,
		Path:     "/",
		MaxAge:   int(cookieMaxAge / time.Second),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   r.TLS != nil,
	})
}
