package web

import (
	"net/http"
	"time"
)

// adminRoutes registers the operator's routes (PROTOCOL.md "Operator
// (admin)"): the sign-in, the dashboard pages under /admin and the admin
// API under /api/admin. Every page and API route goes through adminOnly.
func (s *Server) adminRoutes(hf func(pattern string, h http.HandlerFunc)) {
	hf("GET /admin", s.adminEntry)
	hf("POST /admin/login", s.adminLogin)
	hf("POST /admin/logout", s.adminLogout)
}

// adminOverviewPage is GET /admin (signed in).
func (s *Server) adminOverviewPage(w http.ResponseWriter, r *http.Request) {
	v := adminOverviewView{Uptime: time.Since(s.started).Round(time.Second), Tables: len(s.hub.List())}
	s.render(w, r, http.StatusOK, adminOverview(v))
}

// adminOverviewView is what the overview page shows.
type adminOverviewView struct {
	Uptime time.Duration
	Tables int
}
