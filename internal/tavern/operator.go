package tavern

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"tavern/internal/agent"
	"tavern/internal/alert"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
	"tavern/web"
)

// operator is the console's services beyond the hub (web.Operator):
// budgets, alerts, players and console users, over the store, the hub and
// the models' budget. Safe for concurrent use.
type operator struct {
	store  operatorStore
	hub    *hub.Hub
	budget *agent.Budget
	alerts *alerts
	now    func() time.Time
}

var _ web.Operator = (*operator)(nil)

// loadBudget fills b with today's spend and the tables' own budgets, so
// a restart does not forget what was spent.
func loadBudget(ctx context.Context, store operatorStore, b *agent.Budget, now time.Time) error {
	spend, err := store.SpendSince(ctx, now)
	if err != nil {
		return err
	}
	for _, s := range spend {
		b.Add(s.TableID, s.USD, now)
	}
	limits, err := store.TableBudgets(ctx)
	if err != nil {
		return err
	}
	for _, l := range limits {
		b.SetTable(l.TableID, l.USDPerDay)
	}
	return nil
}

// maxBudgetUSD bounds a table's budget: a typo of a few digits, not a cap.
const maxBudgetUSD = 1_000_000

// SetTableBudget validates usd (0 to maxBudgetUSD, EINVALID otherwise),
// the one check of every way to set a budget, and stores it.
func (o *operator) SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error {
	if !(usd >= 0 && usd <= maxBudgetUSD) { // NaN fails both
		return engine.Errorf(engine.EINVALID, "usd_per_day: want a number of USD from 0 (no budget) to 1000000.")
	}
	if err := o.store.SetTableBudget(ctx, tableID, usd, by); err != nil {
		return err
	}
	o.budget.SetTable(tableID, usd)
	return nil
}

// spendDays is how many UTC days the spend page shows.
const spendDays = 14

func (o *operator) Budgets(ctx context.Context) (web.Budgets, error) {
	now := o.now()
	days, err := o.store.SpendSince(ctx, now.AddDate(0, 0, -(spendDays-1)))
	if err != nil {
		return web.Budgets{}, fmt.Errorf("budgets: %w", err)
	}
	total, spent := o.budget.Today()
	limits := o.budget.Limits()
	if days == nil {
		days = []store.Spend{}
	}
	b := web.Budgets{DayUSD: o.budget.DayUSD, TodayUSD: total, Days: days, Tables: []web.TableSpend{}}
	seen := map[string]bool{}
	add := func(id, name string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		over := o.budget.Over(id)
		b.Tables = append(b.Tables, web.TableSpend{TableID: id, Name: name, USDPerDay: limits[id], TodayUSD: spent[id], Over: over})
	}
	// Every stored table by its name, private and closed ones too: all of
	// them spend, and an id alone says nothing to the operator.
	tables, err := o.hub.AdminTables(ctx)
	if err != nil {
		return web.Budgets{}, fmt.Errorf("budgets: %w", err)
	}
	names := make(map[string]string, len(tables))
	for _, t := range tables {
		names[t.ID] = t.Name
		add(t.ID, t.Name)
	}
	for id := range spent {
		add(id, names[id])
	}
	for id := range limits {
		add(id, names[id])
	}
	sort.SliceStable(b.Tables, func(i, j int) bool { return b.Tables[i].TodayUSD > b.Tables[j].TodayUSD })
	return b, nil
}

func (o *operator) Alerts(ctx context.Context) ([]alert.Alert, error) {
	if err := o.alerts.fresh(ctx); err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return o.alerts.tracker.Active(), nil
}

func (o *operator) FiringAlerts() []alert.Alert { return o.alerts.tracker.Active() }

func (o *operator) AlertHistory(n int) []alert.Record { return o.alerts.tracker.History(n) }

func (o *operator) SearchPlayers(ctx context.Context, q string) ([]store.PlayerRow, error) {
	return o.store.SearchPlayers(ctx, q, 100)
}

func (o *operator) Player(ctx context.Context, id string) (store.PlayerDetail, error) {
	return o.store.PlayerDetail(ctx, id)
}

// BanPlayer marks the ban first, so that a socket closed after it cannot
// come back with the same token.
func (o *operator) BanPlayer(ctx context.Context, id, reason, by string) error {
	if err := o.store.SetPlayerBan(ctx, id, true, reason); err != nil {
		return err
	}
	o.hub.ClosePlayer(ctx, id, hub.ReasonServerBan)
	return nil
}

func (o *operator) UnbanPlayer(ctx context.Context, id, by string) error {
	if err := o.store.SetPlayerBan(ctx, id, false, ""); err != nil {
		return err
	}
	o.hub.AllowPlayer(id)
	return nil
}

func (o *operator) ExportPlayer(ctx context.Context, id string) (any, error) {
	return o.store.ExportPlayer(ctx, id)
}

// ErasePlayer checks the player exists, revokes the token (a ban, so no
// socket comes back), scrubs the loaded tables, then the store's rows.
func (o *operator) ErasePlayer(ctx context.Context, id, by string) error {
	if err := o.store.SetPlayerBan(ctx, id, true, "erased"); err != nil {
		return err
	}
	if err := o.hub.ErasePlayer(ctx, id); err != nil {
		return err
	}
	return o.store.ErasePlayer(ctx, id)
}

func (o *operator) ConsoleUser(ctx context.Context, tokenHash []byte) (store.ConsoleUser, error) {
	return o.store.ConsoleUserByTokenHash(ctx, tokenHash)
}

func (o *operator) ConsoleUsers(ctx context.Context) ([]store.ConsoleUser, error) {
	return o.store.ConsoleUsers(ctx)
}

// CreateConsoleUser makes a token of 128 random bits; the store keeps its
// SHA-256, as web compares it.
func (o *operator) CreateConsoleUser(ctx context.Context, name, role, by string) (store.ConsoleUser, string, error) {
	tok := rand.Text()
	sum := sha256.Sum256([]byte(tok))
	u := store.ConsoleUser{ID: "u-" + strings.ToLower(rand.Text()[:16]), Name: name, Role: role, CreatedBy: by, CreatedAt: o.now().UTC()}
	if err := o.store.CreateConsoleUser(ctx, u, sum[:]); err != nil {
		return store.ConsoleUser{}, "", err
	}
	return u, tok, nil
}

func (o *operator) RevokeConsoleUser(ctx context.Context, id, by string) error {
	return o.store.RevokeConsoleUser(ctx, id)
}

func (o *operator) ExportHistory(ctx context.Context, tableID, agentName string) ([]json.RawMessage, error) {
	// The one table's row, not every table's flags: ENOTFOUND when none.
	if _, err := o.store.TableAccess(ctx, tableID); err != nil {
		return nil, err
	}
	rows, err := o.store.AllHistory(ctx, tableID, agentName)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = r.Body
	}
	return out, nil
}
