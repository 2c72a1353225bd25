package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// noPlayers is a player store the guard never asks.
type noPlayers struct{ Players }

func TestAdminOnlyRefusesCrossOrigin(t *testing.T) {
	const adminToken = "admin-test-token"
	// No hub or store: the guard answers before any handler runs.
	s := newServer(nil, Config{Players: noPlayers{}, AdminToken: adminToken})
	ran := 0
	h := s.adminOnly(func(w http.ResponseWriter, r *http.Request) { ran++; w.WriteHeader(http.StatusNoContent) })
	for _, tc := range []struct {
		name   string
		method string
		hdr    []string
		want   int
	}{
		{"same origin", "POST", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusNoContent},
		{"non-browser client", "POST", nil, http.StatusNoContent},
		{"cross site", "POST", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"same site, other origin", "POST", []string{"Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"other Origin", "DELETE", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"cross-site GET reads", "GET", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusNoContent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran
			req := httptest.NewRequest(tc.method, "http://tavern.test/api/admin/tables/t1/pause", nil)
			req.Header.Set("Authorization", "Bearer "+adminToken)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			rec := httptest.NewRecorder()
			h(rec, req)
			if rec.Code != tc.want {
				t.Errorf("status = %d, want %d (%s)", rec.Code, tc.want, rec.Body)
			}
			if ranNow := ran > before; ranNow != (tc.want == http.StatusNoContent) {
				t.Errorf("handler ran = %v, want %v", ranNow, tc.want == http.StatusNoContent)
			}
		})
	}
}

// A role check reached without an identity (a route not wrapped in
// adminOnly by mistake) grants nothing: not root, not moderator.
func TestRoleChecksRefuseNoIdentity(t *testing.T) {
	s := newServer(nil, Config{Players: noPlayers{}, AdminToken: "admin-test-token"})
	for name, wrap := range map[string]func(http.HandlerFunc) http.HandlerFunc{"moderator": s.moderator, "rootOnly": s.rootOnly} {
		ran := false
		h := wrap(func(w http.ResponseWriter, r *http.Request) { ran = true })
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("POST", "http://tavern.test/api/admin/tables/t1/pause", nil))
		if ran || rec.Code != http.StatusForbidden {
			t.Errorf("%s without an identity: ran %v, status %d, want 403", name, ran, rec.Code)
		}
	}
}

// Without a shelf the adventures' routes are not registered: the API's
// catch-all answers them 404 and the pages are the HTML 404.
func TestNoShelfNoAdventureRoutes(t *testing.T) {
	h := newServer(nil, Config{Players: noPlayers{}}).routes()
	for path, want := range map[string]int{
		"/api/adventures":             http.StatusNotFound,
		"/api/adventures/greyhollow":  http.StatusNotFound,
		"/adventures":                 http.StatusNotFound,
		"/api/adventures/schema.json": http.StatusOK,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://tavern.test"+path, nil))
		if rec.Code != want {
			t.Errorf("GET %s = %d, want %d", path, rec.Code, want)
		}
	}
}
