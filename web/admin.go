package web

import (
	"context"
	"math"
	"net/http"
	"slices"
	"time"

	"tavern/internal/alert"
	"tavern/internal/chart"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// adminHub is the part of *hub.Hub the operator's console uses.
type adminHub interface {
	AdminTables(ctx context.Context) ([]hub.AdminTable, error)
	AdminView(ctx context.Context, id string) (hub.AdminView, error)
	AdminEvents(ctx context.Context, id, kind string, limit int) ([]engine.Event, error)
	AdminHistory(ctx context.Context, id, agentName string) (hub.History, error)
	AdminMemories(ctx context.Context, id string) ([]store.Memory, error)
	Overview(ctx context.Context, since time.Time) (hub.Overview, error)
	LLMCalls(ctx context.Context, since time.Time) ([]store.LLMCall, error)
	LLMGroups(ctx context.Context, since time.Time, group string) ([]hub.LLMGroup, error)
	TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error)
	Pause(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
	EndCombat(ctx context.Context, id string) error
	RetryAction(ctx context.Context, id, actionID string) error
	AbandonAction(ctx context.Context, id, actionID string) error
	FreeSeat(ctx context.Context, id, seat string) error
	CloseTable(ctx context.Context, id string) error
}

// adminRoutes registers the operator's routes (PROTOCOL.md "Operator
// (admin)"): the sign-in, the dashboard pages under /admin and the admin
// API under /api/admin. Every page and API route goes through adminOnly.
func (s *Server) adminRoutes(hf func(pattern string, h http.HandlerFunc)) {
	hf("GET /admin", s.adminEntry)
	hf("POST /admin/login", s.adminLogin)
	hf("POST /admin/logout", s.adminLogout)
	if s.admin == nil {
		return
	}
	a := s.adminOnly
	hf("GET /admin/tables", a(s.adminTablesPage))
	hf("GET /admin/tables/{id}", a(s.adminTablePage))
	hf("GET /admin/llm", a(s.adminLLMPage))
	hf("GET /admin/charts/{name}", a(s.adminChart))
	for _, m := range moderations {
		hf("POST /admin/tables/{id}/"+m.page, a(s.moderator(s.moderate(m, true))))
		hf(m.method+" /api/admin/tables/{id}"+m.api, a(s.moderator(s.moderate(m, false))))
	}
	hf("GET /api/admin/overview", a(s.apiAdminOverview))
	hf("GET /api/admin/tables", a(s.apiAdminTables))
	hf("GET /api/admin/tables/{id}", a(s.apiAdminTable))
	hf("GET /api/admin/tables/{id}/history/{agent}", a(s.apiAdminHistory))
	hf("GET /api/admin/llm", a(s.apiAdminLLM))
	s.operatorRoutes(hf, a)
	s.dataAgentRoutes(hf, a)
}

// moderation is one operator action: its page form path (POST
// /admin/tables/{id}/<page>) and its API route.
type moderation struct {
	name, page, method, api string
	run                     func(h adminHub, r *http.Request, id string) error
}

var moderations = []moderation{
	{"pause", "pause", "POST", "/pause", func(h adminHub, r *http.Request, id string) error { return h.Pause(r.Context(), id) }},
	{"resume", "resume", "POST", "/resume", func(h adminHub, r *http.Request, id string) error { return h.Resume(r.Context(), id) }},
	{"end-combat", "end-combat", "POST", "/end-combat", func(h adminHub, r *http.Request, id string) error { return h.EndCombat(r.Context(), id) }},
	{"retry", "pending/{action}/retry", "POST", "/pending/{action}/retry", func(h adminHub, r *http.Request, id string) error {
		return h.RetryAction(r.Context(), id, r.PathValue("action"))
	}},
	{"abandon", "pending/{action}/abandon", "POST", "/pending/{action}/abandon", func(h adminHub, r *http.Request, id string) error {
		return h.AbandonAction(r.Context(), id, r.PathValue("action"))
	}},
	{"free-seat", "seats/{seat}/free", "DELETE", "/seats/{seat}", func(h adminHub, r *http.Request, id string) error {
		return h.FreeSeat(r.Context(), id, r.PathValue("seat"))
	}},
	{"close", "close", "DELETE", "", func(h adminHub, r *http.Request, id string) error { return h.CloseTable(r.Context(), id) }},
}

// moderate answers a moderation request: 204 for the API; for a page form
// a redirect back to the table view (or the error page).
func (s *Server) moderate(m moderation, page bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, err := tableID(r)
		if err == nil {
			err = m.run(s.admin, r, id)
		}
		if !page {
			if err != nil {
				s.error(w, r, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err != nil {
			st, _, msg := status(err)
			s.render(w, r, st, adminError(st, msg, "/admin/tables/"+id))
			return
		}
		back := "/admin/tables/" + id
		if m.name == "close" {
			back = "/admin/tables"
		}
		http.Redirect(w, r, back, http.StatusSeeOther)
	}
}

// --- JSON API ---

func (s *Server) apiAdminOverview(w http.ResponseWriter, r *http.Request) {
	o, err := s.admin.Overview(r.Context(), time.Now().Add(-24*time.Hour))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) apiAdminTables(w http.ResponseWriter, r *http.Request) {
	ts, err := s.admin.AdminTables(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tables": ts})
}

func (s *Server) apiAdminTable(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	var v hub.AdminView
	if err == nil {
		v, err = s.admin.AdminView(r.Context(), id)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) apiAdminHistory(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	var h hub.History
	if err == nil {
		h, err = s.admin.AdminHistory(r.Context(), id, r.PathValue("agent"))
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

// apiAdminLLM is GET /api/admin/llm?since=<RFC 3339>&group=model|agent|table.
func (s *Server) apiAdminLLM(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	since := time.Now().Add(-24 * time.Hour)
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			s.error(w, r, badRequest("since must be an RFC 3339 time."))
			return
		}
		since = t
	}
	group := q.Get("group")
	if group == "" {
		group = "model"
	}
	gs, err := s.admin.LLMGroups(r.Context(), since, group)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"groups": gs})
}

// --- pages ---

// adminOverviewPage is GET /admin (signed in).
func (s *Server) adminOverviewPage(w http.ResponseWriter, r *http.Request) {
	o, err := s.overviewData(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adminOverview(o))
}

// adminOverviewView is what the overview page shows.
type adminOverviewView struct {
	hub.Overview
	Hour      hub.LLMStats
	TurnsRate float64 // turns per minute over the last hour
	Now       time.Time
	Alerts    []alert.Record // the alert history, newest first
}

func (s *Server) overviewData(ctx context.Context) (adminOverviewView, error) {
	if s.admin == nil {
		return adminOverviewView{Now: time.Now()}, nil
	}
	now := time.Now()
	o, err := s.admin.Overview(ctx, now.Add(-24*time.Hour))
	if err != nil {
		return adminOverviewView{}, err
	}
	calls, err := s.admin.LLMCalls(ctx, now.Add(-time.Hour))
	if err != nil {
		return adminOverviewView{}, err
	}
	return adminOverviewView{Overview: o, Hour: hub.Stats(calls), TurnsRate: float64(o.TurnsLastHour) / 60, Now: now, Alerts: s.alertHistory()}, nil
}

// adminChart is GET /admin/charts/{name}: hour.svg (by the minute) or
// day.svg (by the quarter hour): turns, model calls and errors, drawn by
// internal/chart. An <img>, so the page needs no inline styles.
func (s *Server) adminChart(w http.ResponseWriter, r *http.Request) {
	var span, step time.Duration
	var title string
	switch r.PathValue("name") {
	case "hour.svg":
		span, step, title = time.Hour, time.Minute, "Last hour, per minute"
	case "day.svg":
		span, step, title = 24*time.Hour, 15*time.Minute, "Last day, per 15 minutes"
	case "tokens.svg":
		span, step, title = 24*time.Hour, 15*time.Minute, "Tokens, last day, per 15 minutes"
	default:
		s.error(w, r, &apiError{code: hub.CodeNotFound, message: "No such chart."})
		return
	}
	// Point i counts [times[i], times[i]+step); the last one is the
	// bucket now falls in.
	start := time.Now().Truncate(step).Add(-span)
	n := int(span/step) + 1
	times := make([]time.Time, n)
	for i := range times {
		times[i] = start.Add(time.Duration(i) * step)
	}
	bucket := func(t time.Time) int {
		i := int(math.Floor(float64(t.Sub(start)) / float64(step)))
		if i < 0 || i >= n {
			return -1
		}
		return i
	}
	calls, err := s.admin.LLMCalls(r.Context(), start)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var series []chart.Series
	if r.PathValue("name") == "tokens.svg" {
		prompt, cached, completion := make([]float64, n), make([]float64, n), make([]float64, n)
		for _, c := range calls {
			if i := bucket(c.Started); i >= 0 {
				prompt[i] += float64(c.PromptTokens - c.CachedTokens)
				cached[i] += float64(c.CachedTokens)
				completion[i] += float64(c.CompletionTokens)
			}
		}
		series = []chart.Series{{Name: "prompt (uncached)", Values: prompt}, {Name: "cached", Values: cached}, {Name: "completion", Values: completion}}
	} else {
		turns, err := s.admin.TurnTimes(r.Context(), start)
		if err != nil {
			s.error(w, r, err)
			return
		}
		tv, cv, ev := make([]float64, n), make([]float64, n), make([]float64, n)
		for _, t := range turns {
			if i := bucket(t); i >= 0 {
				tv[i]++
			}
		}
		for _, c := range calls {
			if i := bucket(c.Started); i >= 0 {
				cv[i]++
				if c.Error != "" {
					ev[i]++
				}
			}
		}
		series = []chart.Series{{Name: "turns", Values: tv}, {Name: "LLM calls", Values: cv}, {Name: "LLM errors", Values: ev}}
	}
	svg, err := chart.TimeSeries(title, times, series, 720, 280)
	if err != nil {
		s.error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	// The chart library styles with attributes; nothing in it runs.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_, _ = w.Write(svg)
}

// adminTablesPage is GET /admin/tables.
func (s *Server) adminTablesPage(w http.ResponseWriter, r *http.Request) {
	ts, err := s.admin.AdminTables(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adminTables(ts, time.Now()))
}

// adminTableView is what the table view shows.
type adminTableView struct {
	hub.AdminView
	Kind     string // the event filter, "" for all
	Kinds    []string
	Events   []engine.Event
	Agent    string
	History  hub.History
	Memories []store.Memory
	Now      time.Time
}

// adminTablePage is GET /admin/tables/{id}?kind=&agent=.
func (s *Server) adminTablePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	id, err := tableID(r)
	v := adminTableView{Kind: r.URL.Query().Get("kind"), Agent: r.URL.Query().Get("agent"), Now: time.Now()}
	if v.Agent == "" {
		v.Agent = engine.AgentNarrative
	}
	if err == nil {
		v.AdminView, err = s.admin.AdminView(ctx, id)
	}
	if err == nil {
		var all []engine.Event
		all, err = s.admin.AdminEvents(ctx, id, "", hub.MaxEventsPage)
		for _, e := range all {
			if !slices.Contains(v.Kinds, string(e.Kind)) {
				v.Kinds = append(v.Kinds, string(e.Kind))
			}
		}
		slices.Sort(v.Kinds)
		if err == nil {
			v.Events, err = s.admin.AdminEvents(ctx, id, v.Kind, 200)
		}
	}
	if err == nil {
		v.History, err = s.admin.AdminHistory(ctx, id, v.Agent)
	}
	if err == nil {
		v.Memories, err = s.admin.AdminMemories(ctx, id)
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	slices.Reverse(v.Events) // newest first on the page
	s.render(w, r, http.StatusOK, adminTable(v))
}

// adminLLMView is what the LLM page shows.
type adminLLMView struct {
	Window   string
	Windows  []string
	Total    hub.LLMStats
	ByModel  []hub.LLMGroup
	ByAgent  []hub.LLMGroup
	ByTable  []hub.LLMGroup
	Slowest  []store.LLMCall
	Failed   []store.LLMCall
	Now      time.Time
	ErrKinds []string
	// Names are the tables' names by id, so rows read by name.
	Names map[string]string
	// Feedback: the players' scores by model and prompt (feedback.go).
	Feedback []store.FeedbackGroup
}

var llmWindows = map[string]time.Duration{"1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour}

// adminLLMPage is GET /admin/llm?window=1h|24h|7d|30d.
func (s *Server) adminLLMPage(w http.ResponseWriter, r *http.Request) {
	win := r.URL.Query().Get("window")
	if _, ok := llmWindows[win]; !ok {
		win = "24h"
	}
	now := time.Now()
	calls, err := s.admin.LLMCalls(r.Context(), now.Add(-llmWindows[win]))
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	v := adminLLMView{Window: win, Windows: []string{"1h", "24h", "7d", "30d"}, Total: hub.Stats(calls), Now: now,
		ErrKinds: []string{store.CallTimeout, store.CallRateLimit, store.CallServer, store.CallAuth, store.CallInvalidOutput, store.CallOther}}
	v.Names = map[string]string{}
	if rows, err := s.admin.AdminTables(r.Context()); err == nil {
		for _, t := range rows {
			v.Names[t.ID] = t.Name
		}
	}
	v.Feedback = s.feedbackSince(r.Context(), now.Add(-llmWindows[win]))
	v.ByModel, _ = hub.Group(calls, "model")
	v.ByAgent, _ = hub.Group(calls, "agent")
	v.ByTable, _ = hub.Group(calls, "table")
	slow := slices.Clone(calls)
	slices.SortFunc(slow, func(a, b store.LLMCall) int { return int(b.LatencyMS - a.LatencyMS) })
	v.Slowest = slow[:min(10, len(slow))]
	for i := len(calls) - 1; i >= 0 && len(v.Failed) < 20; i-- {
		if calls[i].Error != "" {
			v.Failed = append(v.Failed, calls[i])
		}
	}
	s.render(w, r, http.StatusOK, adminLLM(v))
}

// adminFail renders an error as an operator page.
func (s *Server) adminFail(w http.ResponseWriter, r *http.Request, err error) {
	st, _, msg := status(err)
	if st >= 500 {
		s.log.Error("admin page", "path", r.URL.Path, "err", err)
	}
	s.render(w, r, st, adminError(st, msg, "/admin"))
}
