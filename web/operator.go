package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"tavern/internal/alert"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// Operator is the operator's services beyond the hub (PROTOCOL.md
// "Operator, continued"): budgets, alerts, players and console users.
// internal/tavern builds the one the server uses; it must be safe for
// concurrent use. by, where a method takes it, names who acted (a console
// user's name, or "root").
type Operator interface {
	// SetTableBudget sets a table's daily model budget in USD (0: none).
	SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error
	// Budgets returns the budgets and what was spent today and on each of
	// the last days.
	Budgets(ctx context.Context) (Budgets, error)

	// Alerts runs the alert rules if they have not just run and returns
	// the firing alerts, oldest first.
	Alerts(ctx context.Context) ([]alert.Alert, error)
	// FiringAlerts returns the alerts firing at the rules' last run,
	// without running them: the banner of every console page.
	FiringAlerts() []alert.Alert
	// AlertHistory returns the last n alerts raised, newest first.
	AlertHistory(n int) []alert.Record

	// SearchPlayers returns the players whose name contains q or whose id
	// is q (all, newest first, when q is empty), at most 100.
	SearchPlayers(ctx context.Context, q string) ([]store.PlayerRow, error)
	// Player returns a player's page; ENOTFOUND if there is none.
	Player(ctx context.Context, id string) (store.PlayerDetail, error)
	// BanPlayer bans a player server-wide: their token signs nobody in and
	// their sockets close with 4003; UnbanPlayer lifts it.
	BanPlayer(ctx context.Context, id, reason, by string) error
	UnbanPlayer(ctx context.Context, id, by string) error
	// ExportPlayer returns all of a player's data, to be served as JSON.
	ExportPlayer(ctx context.Context, id string) (any, error)
	// ErasePlayer erases a player (PROTOCOL.md "Operator, continued").
	ErasePlayer(ctx context.Context, id, by string) error

	ConsoleUsers

	// ExportHistory returns every message of an agent's history at a
	// table (narrative or combat), oldest first; ENOTFOUND for no table.
	ExportHistory(ctx context.Context, tableID, agentName string) ([]json.RawMessage, error)
}

// Budgets is the answer of GET /api/admin/budgets: the server's daily
// budget, today's spend, each table's budget and spend today, and the
// spend by day and table over the last days.
type Budgets struct {
	DayUSD   float64       `json:"day_usd"`
	TodayUSD float64       `json:"today_usd"`
	Tables   []TableSpend  `json:"tables"`
	Days     []store.Spend `json:"days"`
}

// TableSpend is one table's budget (0: none of its own) and spend today;
// Over says its turns are played offline until the next UTC day.
type TableSpend struct {
	TableID   string  `json:"table_id"`
	Name      string  `json:"name,omitempty"`
	USDPerDay float64 `json:"usd_per_day"`
	TodayUSD  float64 `json:"today_usd"`
	Over      bool    `json:"over"`
}

// operatorRoutes registers the routes of PROTOCOL.md "Operator,
// continued"; a wraps each in the console's sign-in.
func (s *Server) operatorRoutes(hf func(pattern string, h http.HandlerFunc), a func(http.HandlerFunc) http.HandlerFunc) {
	if s.operator == nil {
		return
	}
	hf("GET /admin/spend", a(s.adminSpendPage))
	hf("POST /admin/tables/{id}/budget", a(s.moderator(s.pageTableBudget)))
	hf("GET /api/admin/budgets", a(s.apiBudgets))
	hf("GET /api/admin/alerts", a(s.apiAlerts))
	s.playerRoutes(hf, a)
	s.userRoutes(hf, a)
	hf("GET /api/admin/tables/{id}/export/{file}", a(s.apiAdminExport))
	hf("PUT /api/admin/tables/{id}/budget", a(s.moderator(s.apiTableBudget)))
}

type budgetRequest struct {
	USDPerDay *float64 `json:"usd_per_day"`
}

// apiTableBudget is PUT /api/admin/tables/{id}/budget {"usd_per_day"} →
// 200 {"table_id", "usd_per_day"}.
func (s *Server) apiTableBudget(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var req budgetRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if req.USDPerDay == nil {
		s.error(w, r, badRequest("usd_per_day: want a number of USD (0: no budget)."))
		return
	}
	if err := s.setBudget(r, id, *req.USDPerDay); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, store.TableBudget{TableID: id, USDPerDay: *req.USDPerDay, SetBy: actorName(r.Context())})
}

// pageTableBudget is the spend page's form: usd_per_day.
func (s *Server) pageTableBudget(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	var v float64
	if err == nil {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		if v, err = strconv.ParseFloat(r.FormValue("usd_per_day"), 64); err != nil {
			err = badRequest("usd_per_day: want a number of USD (0: no budget).")
		}
	}
	if err == nil {
		err = s.setBudget(r, id, v)
	}
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	http.Redirect(w, r, "/admin/spend", http.StatusSeeOther)
}

func (s *Server) setBudget(r *http.Request, id string, usd float64) error {
	by := actorName(r.Context())
	if err := s.operator.SetTableBudget(r.Context(), id, usd, by); err != nil {
		return err
	}
	s.log.Info("moderation", "action", "budget", "table", id, "usd_per_day", usd, "by", by)
	return nil
}

func (s *Server) apiBudgets(w http.ResponseWriter, r *http.Request) {
	b, err := s.operator.Budgets(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *Server) adminSpendPage(w http.ResponseWriter, r *http.Request) {
	b, err := s.operator.Budgets(r.Context())
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, adminSpend(b, time.Now().UTC().Format(time.DateOnly)))
}

// orID is name, or id when there is no name.
func orID(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

// apiAlerts is GET /api/admin/alerts → {"alerts": [Alert]}.
func (s *Server) apiAlerts(w http.ResponseWriter, r *http.Request) {
	as, err := s.operator.Alerts(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if as == nil {
		as = []alert.Alert{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"alerts": as})
}

type alertsKey struct{}

// firingAlerts returns the alerts adminOnly put in ctx for the banner.
func firingAlerts(ctx context.Context) []alert.Alert {
	as, _ := ctx.Value(alertsKey{}).([]alert.Alert)
	return as
}

// withAlerts puts the firing alerts in r's context for the banner that
// every console page shows.
func (s *Server) withAlerts(r *http.Request) *http.Request {
	if s.operator == nil || isAPI(r) {
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), alertsKey{}, s.operator.FiringAlerts()))
}

// alertHistory returns the alert history of the overview, or none
// without an operator.
func (s *Server) alertHistory() []alert.Record {
	if s.operator == nil {
		return nil
	}
	return s.operator.AlertHistory(20)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func severityPill(sev string) string {
	if sev == alert.Critical {
		return "failed"
	}
	return "paused"
}

// exportAgents are the agents whose histories export, in the order the
// console links them.
var exportAgents = []string{engine.AgentNarrative, engine.AgentCombat}

// apiAdminExport is GET /api/admin/tables/{id}/export/history_<agent>.jsonl:
// the owner's export (web/memory.go) for the operator, any table.
func (s *Server) apiAdminExport(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	file := r.PathValue("file")
	agentName, err := exportAgent(file)
	if err != nil {
		s.error(w, r, err)
		return
	}
	lines, err := s.operator.ExportHistory(r.Context(), id, agentName)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.log.Info("history exported", "table", id, "agent", agentName, "by", actorName(r.Context()))
	s.writeJSONL(w, r, file, lines)
}
