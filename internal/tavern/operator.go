package tavern

import (
	"context"
	"fmt"
	"sort"
	"time"

	"tavern/internal/agent"
	"tavern/internal/alert"
	"tavern/internal/db"
	"tavern/internal/hub"
	"tavern/web"
)

// operator is the console's services beyond the hub (web.Operator):
// budgets, alerts, players and console users, over the store, the hub and
// the models' budget. Safe for concurrent use.
type operator struct {
	store  *db.DB
	hub    *hub.Hub
	budget *agent.Budget
	alerts *alerts
	now    func() time.Time
}

var _ web.Operator = (*operator)(nil)

// loadBudget fills b with today's spend and the tables' own budgets, so
// a restart does not forget what was spent.
func loadBudget(ctx context.Context, store *db.DB, b *agent.Budget, now time.Time) error {
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

func (o *operator) SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error {
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
	b := web.Budgets{DayUSD: o.budget.DayUSD, TodayUSD: total, Days: days}
	seen := map[string]bool{}
	add := func(id, name string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		over := (limits[id] > 0 && spent[id] >= limits[id]) || (b.DayUSD > 0 && total >= b.DayUSD)
		b.Tables = append(b.Tables, web.TableSpend{TableID: id, Name: name, USDPerDay: limits[id], TodayUSD: spent[id], Over: over})
	}
	for _, t := range o.hub.List() {
		add(t.ID, t.Name)
	}
	for id := range spent {
		add(id, "")
	}
	for id := range limits {
		add(id, "")
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
