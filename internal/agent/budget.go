package agent

import (
	"context"
	"maps"
	"sync"
	"time"
)

// Budget caps what the models cost per UTC day (PROTOCOL.md "Operator,
// continued"): the whole server's spend against DayUSD, and each table's
// against its own budget. Logged adds every priced call to it; the Runner
// asks it before each turn and plays a table that is over budget with its
// Offline model until the next UTC day. It is safe for concurrent use; the
// zero value has no budget and counts nothing until used.
type Budget struct {
	// DayUSD is the server's daily budget over every table; 0: none.
	DayUSD float64
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu      sync.Mutex
	day     string // the UTC day the counts are of, 2006-01-02
	total   float64
	spent   map[string]float64 // by table, today
	limits  map[string]float64 // by table, USD a day; absent or 0: none
	noticed map[string]bool    // tables told today that they went offline (Told)
}

// BudgetState is a table's standing against its budgets.
type BudgetState struct {
	// Over is true once the table or the server spent its day's budget.
	Over bool
	// Notice is true while Over and the table was not told yet today:
	// the turn tells the table (a `system` event `budget`), and
	// Budget.Told marks it told once that turn is committed.
	Notice bool
	// Reason says which budget is spent, for the notice and the logs.
	Reason string
}

func (b *Budget) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// roll starts a new day's counts when the UTC day changed. b.mu is held.
func (b *Budget) roll(at time.Time) {
	d := at.UTC().Format(time.DateOnly)
	if d == b.day {
		return
	}
	b.day, b.total = d, 0
	b.spent, b.noticed = map[string]float64{}, map[string]bool{}
	if b.limits == nil {
		b.limits = map[string]float64{}
	}
}

// Add counts usd spent for tableID ("" for calls of no table, such as the
// data agent's, which count towards the server's budget only) at at. A
// call of an earlier day than the current one is not counted.
func (b *Budget) Add(tableID string, usd float64, at time.Time) {
	if usd <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	if at.UTC().Format(time.DateOnly) != b.day {
		return
	}
	b.total += usd
	if tableID != "" {
		b.spent[tableID] += usd
	}
}

// SetTable sets tableID's own daily budget in USD; 0 removes it.
func (b *Budget) SetTable(tableID string, usd float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	if usd <= 0 {
		delete(b.limits, tableID)
		return
	}
	b.limits[tableID] = usd
}

// Limits returns every table's own daily budget, by table id.
func (b *Budget) Limits() map[string]float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	return maps.Clone(b.limits)
}

// Today returns today's (UTC) spend of the whole server and by table.
func (b *Budget) Today() (total float64, byTable map[string]float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	return b.total, maps.Clone(b.spent)
}

// Check returns tableID's standing now. It changes nothing: the notice
// stays due (Notice) until Told marks it told.
func (b *Budget) Check(tableID string) BudgetState {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	var st BudgetState
	if lim := b.limits[tableID]; lim > 0 && b.spent[tableID] >= lim {
		st.Over, st.Reason = true, "the table's daily model budget is spent"
	} else if b.DayUSD > 0 && b.total >= b.DayUSD {
		st.Over, st.Reason = true, "the server's daily model budget is spent"
	}
	st.Notice = st.Over && !b.noticed[tableID]
	return st
}

// Over reports whether tableID, or the server, spent its day's budget.
func (b *Budget) Over(tableID string) bool { return b.Check(tableID).Over }

// Told marks tableID told today that it plays offline (told true), once
// the turn carrying the notice is committed; told false makes the notice
// due again, when that commit failed after all.
func (b *Budget) Told(tableID string, told bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll(b.now())
	if told {
		b.noticed[tableID] = true
	} else {
		delete(b.noticed, tableID)
	}
}

// budgetModel returns the model a turn of the table in ctx plays with:
// model, or r.Offline when the table is over budget (and whether to tell
// the table so).
func (r *Runner) budgetModel(ctx context.Context, model Model) (Model, BudgetState) {
	if r.Budget == nil || r.Offline == nil {
		return model, BudgetState{}
	}
	st := r.Budget.Check(TableFrom(ctx))
	if !st.Over {
		return model, st
	}
	return r.Offline, st
}

// Told marks the budget notice res carried as told for tableID (told
// true, once the turn is committed) or due again (false, its commit
// failed). A result without the notice changes nothing.
func (r *Runner) Told(tableID string, res Result, told bool) {
	if r != nil && res.budgetNotice && r.Budget != nil {
		r.Budget.Told(tableID, told)
	}
}

// SystemBudget is the code of the `system` event that tells a table its
// turns are played offline for the rest of the UTC day.
const SystemBudget = "budget"
