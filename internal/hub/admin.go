package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// The operator's read side (PROTOCOL.md "Operator (admin)"): every table
// with its round, active entry, pending actions and connections; one table
// as the DM sees it (NPC secrets included: admin only, never in a
// Snapshot); each agent's history with its model calls; the LLM call log
// aggregated per model, agent or table. Moderation is in moderation.go.

// AdminStore is the part of the store the operator's side needs.
// internal/db satisfies it. Implementations must be safe for concurrent
// use.
type AdminStore interface {
	// QueueActionState queues an open action's life to be written with
	// the next group commit and returns at once (the table goroutine never
	// waits on the disk for it); a state queued before a Commit lands no
	// later than that commit, and closed or unknown actions are left alone,
	// so a late state never reopens a resolved action.
	QueueActionState(tableID string, a store.ActionLife)
	// ActionStates returns the life of the table's open actions by id.
	ActionStates(ctx context.Context, tableID string) (map[string]store.ActionLife, error)
	// TableFlags returns every table's marks by id.
	TableFlags(ctx context.Context) (map[string]store.TableFlags, error)
	// TableProgress returns how far every stored table has played, by id.
	TableProgress(ctx context.Context) (map[string]store.TableProgress, error)
	// CallsSince returns the model calls since since (of one table, or all
	// when tableID is ""), oldest first, at most limit.
	CallsSince(ctx context.Context, since time.Time, tableID string, limit int) ([]store.LLMCall, error)
	// TurnTimes returns when each DM turn since since began, oldest first.
	TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error)
}

// ModelHealth reports whether each model answers (*agent.Health does).
// Implementations must be safe for concurrent use.
type ModelHealth interface {
	Models(now time.Time) []agent.ModelHealth
}

// PendingView is an open action and where it is in its life. Error is
// shown to the operator only.
type PendingView struct {
	ActionID string `json:"action_id"`
	PlayerID string `json:"player_id"`
	Seat     string `json:"seat,omitempty"`
	Text     string `json:"text,omitempty"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

// Connections counts a table's open websockets by role.
type Connections struct {
	Players    int `json:"players"`
	Spectators int `json:"spectators"`
}

// AdminTable is a table as the operator sees it in the list.
type AdminTable struct {
	TableSummary
	Round       *int                    `json:"round,omitempty"`
	Active      *engine.InitiativeEntry `json:"active,omitempty"`
	Paused      bool                    `json:"paused"`
	Closed      bool                    `json:"closed,omitempty"`
	Busy        bool                    `json:"busy"`
	Connections Connections             `json:"connections"`
	Pending     []PendingView           `json:"pending"`
	LastTurnAt  *time.Time              `json:"last_turn_at,omitempty"`
	LastError   string                  `json:"last_error,omitempty"`
	CreatedAt   time.Time               `json:"created_at"`
	Turn        int                     `json:"turn"`
	// Seated lists who sits where, for the operator's seat buttons (only
	// on a loaded table's row). Loaded tells whether the table is in
	// memory (idle tables are evicted).
	SeatList []engine.Seat `json:"seat_list,omitempty"`
	Loaded   bool          `json:"loaded"`
	// Stale marks the row of a loaded table too busy to answer in time
	// (AdminTables): its summary, marks, busy flag and connections are
	// live, its turn, round and last turn time the store's, and its
	// pending actions, active entry, seats and last error are left out.
	Stale bool `json:"stale,omitempty"`
	// Owner is the node running the table, null when none does
	// (nodes.go).
	Owner *OwnerView `json:"owner"`
}

// AdminView is one table as the DM sees it: the list row, the whole world
// (NPC secrets included), the party, and the fight.
type AdminView struct {
	AdminTable
	World  engine.World        `json:"world"`
	Party  []*engine.Character `json:"party"`
	Combat *CombatView         `json:"combat,omitempty"`
}

// Overview is GET /api/admin/overview.
type Overview struct {
	UptimeS       int64       `json:"uptime_s"`
	Tables        int         `json:"tables"`
	TablesActive  int         `json:"tables_active"`
	TablesPaused  int         `json:"tables_paused"`
	Connections   Connections `json:"connections"`
	TurnsLastHour int         `json:"turns_last_hour"`
	LLM           LLMStats    `json:"llm"`
	// Models says, additively, whether each model answers, by name: kept
	// in memory since the start, so a restart forgets it.
	Models []agent.ModelHealth `json:"models"`
	// Nodes are the servers sharing the store (one on SQLite: nodes.go).
	Nodes []NodeView `json:"nodes"`
}

// LLMStats aggregates model calls.
type LLMStats struct {
	Calls            int     `json:"calls"`
	Errors           int     `json:"errors"`
	P50MS            int64   `json:"p50_ms"`
	P95MS            int64   `json:"p95_ms"`
	PromptTokens     int     `json:"prompt_tokens"`
	CachedTokens     int     `json:"cached_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	// Additive: errors by kind (timeout, rate_limit, server, auth,
	// invalid_output, other) and the share of prompt tokens served from
	// the cache.
	ErrorsByKind map[string]int `json:"errors_by_kind"`
	CacheShare   float64        `json:"cache_share"`
	// UsageUnknown counts the calls whose answer carried no usage
	// (store.LLMCall.UsageUnknown): the tokens and cost above leave them
	// out, unknown rather than zero.
	UsageUnknown int `json:"usage_unknown"`
}

// LLMGroup is the stats of one model, agent or table.
type LLMGroup struct {
	Key string `json:"key"`
	LLMStats
}

// HistoryEntry is one message of an agent's history.
type HistoryEntry struct {
	Turn int `json:"turn"`
	agent.Message
}

// History is GET /api/admin/tables/{id}/history/{agent}: the messages
// (tool calls and results included), newest last, and the agent's model
// calls at the table with latency and tokens, by turn.
type History struct {
	Agent    string          `json:"agent"`
	Messages []HistoryEntry  `json:"messages"`
	Calls    []store.LLMCall `json:"calls"`
}

// ---- the table goroutine's side ----

// pendingViews lists the open actions; withErr adds the last error (the
// operator's view only).
func (t *table) pendingViews(withErr bool) []PendingView {
	out := make([]PendingView, 0, len(t.acts.open))
	for _, a := range t.acts.open {
		v := PendingView{ActionID: a.ID, PlayerID: a.PlayerID, State: store.ActionPending}
		if l := t.acts.life[a.ID]; l != nil {
			v.State, v.Attempts = l.State, l.Attempts
			if withErr {
				v.Error, v.Seat, v.Text = l.Error, a.Seat, a.Text
			}
		}
		out = append(out, v)
	}
	if len(out) == 0 && !withErr {
		return nil
	}
	return out
}

// logTurn writes the turn's one log line and its metrics.
func (t *table) logTurn(j *job, res agent.Result, result string, err error) {
	d := t.h.cfg.Now().Sub(j.started)
	agentName := res.Agent
	if agentName == "" {
		agentName = engine.AgentNarrative
		if j.kind != agent.TurnPlayer && j.kind != agent.TurnStart || j.entry.Kind != "" {
			agentName = engine.AgentCombat
		}
	}
	calls := 0
	for _, m := range res.Messages {
		calls += len(m.ToolCalls)
	}
	attrs := []slog.Attr{slog.Int("turn", j.turnNo), slog.String("agent", agentName), slog.String("kind", j.kind),
		slog.Duration("duration", d), slog.Int("tool_calls", calls), slog.Int("prompt_tokens", res.Usage.PromptTokens),
		slog.Int("cached_tokens", res.Usage.CachedTokens), slog.Int("completion_tokens", res.Usage.CompletionTokens),
		slog.String("result", result)}
	if j.action != nil {
		attrs = append(attrs, slog.String("action", j.action.ID))
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", errText(err)))
	}
	t.log.LogAttrs(context.Background(), slog.LevelInfo, "turn", attrs...)
	t.h.metrics.turn(agentName, result, d.Seconds())
}

// errText is an error for the operator, bounded.
func errText(err error) string {
	s := err.Error()
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// connOpened and connClosed log a websocket's life (client.go's join and
// part call them).
func (t *table) connOpened(c *client) {
	t.log.Info("socket open", "role", roleLabel(c.role), "player", playerID(c))
}

func (t *table) connClosed(c *client) {
	code := int(c.closeCode)
	t.log.Info("socket closed", "role", roleLabel(c.role), "player", playerID(c), "code", code, "reason", c.closeReason)
	t.h.metrics.socketClosed(roleLabel(c.role), code)
}

func playerID(c *client) string {
	if c.player == nil {
		return ""
	}
	return c.player.ID
}

func (t *table) adminRow() AdminTable {
	counts := t.admin.Load()
	a := AdminTable{TableSummary: *t.summary.Load(), Paused: t.paused, Closed: t.closed, Busy: t.job != nil,
		Connections: Connections{Players: counts.Players, Spectators: counts.Spectators}, Pending: t.pendingViews(true),
		LastError: t.lastError, CreatedAt: t.meta.CreatedAt, Turn: t.st.Game.Turn, SeatList: append([]engine.Seat{}, t.seats...), Loaded: true}
	if cb := t.st.Game.Combat; cb != nil {
		r := cb.Round
		a.Round = &r
		if cb.Ending == "" && cb.Index >= 0 && cb.Index < len(cb.Order) {
			e := entryView(t.st, cb.Current())
			a.Active = &e
		}
	}
	if !t.lastTurnAt.IsZero() {
		at := t.lastTurnAt.UTC()
		a.LastTurnAt = &at
	}
	return a
}

// ---- the hub's API ----

// anyTable returns a table, closed ones included (the operator's view).
func (h *Hub) anyTable(id string) (*table, error) {
	return h.get(context.Background(), id)
}

// AdminTables returns every stored table, closed ones last, newest first.
// A loaded table gives its live row, or, too busy to answer within
// adminRowWait, the row it publishes (marked Stale); the others give the
// row the store knows, and stay unloaded: an operator looking at a
// thousand tables must not bring all of them into memory.
func (h *Hub) AdminTables(ctx context.Context) ([]AdminTable, error) {
	infos, err := h.cfg.Store.TableInfos(ctx)
	if err != nil {
		return nil, err
	}
	progress, err := h.cfg.Store.TableProgress(ctx)
	if err != nil {
		return nil, err
	}
	rows := make([]AdminTable, len(infos))
	var loaded []liveRow
	h.mu.RLock()
	for n, i := range infos {
		rows[n] = storedRow(h.summaryOf(i.Table, i.Mode, i.Seated, 0), i, progress[i.Table.ID])
		if t, ok := h.tables[i.Table.ID]; ok {
			loaded = append(loaded, liveRow{t: t, row: &rows[n]})
		}
	}
	h.mu.RUnlock()
	if err := h.askLiveRows(ctx, loaded); err != nil {
		return nil, err
	}
	if err := h.setOwners(ctx, rows); err != nil {
		return nil, err
	}
	sort.SliceStable(rows, func(a, b int) bool {
		ra, rb := rows[a], rows[b]
		if ra.Closed != rb.Closed {
			return rb.Closed
		}
		if !ra.CreatedAt.Equal(rb.CreatedAt) {
			return ra.CreatedAt.After(rb.CreatedAt)
		}
		return ra.ID < rb.ID
	})
	return rows, nil
}

// adminRowWait bounds how long the operator's list waits for the loaded
// tables' goroutines (busy committing a turn, say): one deadline for all,
// so that many busy tables do not add up; adminRowAsks bounds how many
// tables it asks at once. Asked one after the other, with every table
// committing, 100 tables took 27 s to list.
const (
	adminRowWait = time.Second
	adminRowAsks = 16
)

// liveRow is a loaded table and its row in the operator's list, which
// holds the stored row until the table answers.
type liveRow struct {
	t   *table
	row *AdminTable
}

// askLiveRows asks the loaded tables for their rows, adminRowAsks at a
// time, until adminRowWait has passed. It fails only when ctx ends or the
// hub closes.
func (h *Hub) askLiveRows(ctx context.Context, loaded []liveRow) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wait, stopWaiting := context.WithTimeout(ctx, adminRowWait)
	defer stopWaiting()
	slots := make(chan struct{}, adminRowAsks)
	errs := make(chan error, len(loaded))
	var wg sync.WaitGroup
	for _, l := range loaded {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := h.askLiveRow(ctx, wait, l); err != nil {
				errs <- err
				cancel() // the list fails: stop asking the others
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// askLiveRow replaces l's stored row with the table's live row. A table
// that does not answer before wait ends gets the row the others can read
// without it (publishedRow); one evicted meanwhile keeps the stored row,
// which is as good. wait is ctx with a deadline.
func (h *Hub) askLiveRow(ctx, wait context.Context, l liveRow) error {
	var row AdminTable
	err := l.t.callSystem(wait, func() error { row = l.t.adminRow(); return nil })
	switch {
	case err == nil:
		*l.row = row
	case ctx.Err() != nil || h.ctx.Err() != nil:
		return err
	case wait.Err() != nil:
		*l.row = l.t.publishedRow(*l.row)
	}
	return nil
}

// publishedRow is the row of a table that did not answer in time: the
// stored row with what the table publishes for readers on other
// goroutines (its summary and marks, busy and connections), marked Stale.
// Safe to call from any goroutine.
func (t *table) publishedRow(stored AdminTable) AdminTable {
	counts := t.admin.Load()
	row := stored
	row.TableSummary = *t.summary.Load()
	row.Paused, row.Closed, row.Busy = counts.Paused, counts.Closed, counts.Busy
	row.Connections = Connections{Players: counts.Players, Spectators: counts.Spectators}
	row.Loaded, row.Stale = true, true
	return row
}

// storedRow is the operator's row of a table that is not loaded: no
// socket, no turn running, no open action (a table with one stays loaded).
func storedRow(sum TableSummary, i store.TableInfo, p store.TableProgress) AdminTable {
	a := AdminTable{TableSummary: sum, Paused: i.Flags.Paused, Closed: i.Flags.Closed, CreatedAt: i.Table.CreatedAt,
		Turn: p.Turn, Round: p.Round, Pending: []PendingView{}}
	if !p.LastTurnAt.IsZero() {
		at := p.LastTurnAt.UTC()
		a.LastTurnAt = &at
	}
	return a
}

// AdminView returns one table as the DM sees it, secrets included. The
// caller owns the copy.
func (h *Hub) AdminView(ctx context.Context, id string) (AdminView, error) {
	t, err := h.anyTable(id)
	if err != nil {
		return AdminView{}, err
	}
	var v AdminView
	err = t.callSystem(ctx, func() error {
		st := t.st.Clone()
		v = AdminView{AdminTable: t.adminRow(), World: st.World, Party: st.Party, Combat: initiativeView(t.st)}
		return nil
	})
	return v, err
}

// AdminEvents returns the table's last limit events (at most
// MaxEventsPage) of the given kind ("" for all), oldest first.
func (h *Hub) AdminEvents(ctx context.Context, id, kind string, limit int) ([]engine.Event, error) {
	t, err := h.anyTable(id)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxEventsPage {
		limit = DefaultEventsPage
	}
	var seq int64
	if err := t.callSystem(ctx, func() error { seq = t.seq; return nil }); err != nil {
		return nil, err
	}
	// Read back in pages until enough events of the kind are found or
	// the start of the log is reached.
	var out []engine.Event
	for hi := seq; hi > 0 && len(out) < limit; hi -= MaxEventsPage {
		lo := max(0, hi-MaxEventsPage)
		evs, err := h.cfg.Store.Events(ctx, id, lo, int(hi-lo))
		if err != nil {
			return nil, fmt.Errorf("events of %s: %w", id, err)
		}
		var page []engine.Event
		for _, e := range evs {
			if kind == "" || e.Kind == engine.Kind(kind) {
				page = append(page, e)
			}
		}
		out = append(page, out...)
		if kind == "" || hi-lo < MaxEventsPage {
			break
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return nonNil(out), nil
}

// AdminHistory returns an agent's whole history at a table (archived
// messages included) and its model calls.
func (h *Hub) AdminHistory(ctx context.Context, id, agentName string) (History, error) {
	if _, err := h.anyTable(id); err != nil {
		return History{}, err
	}
	switch agentName {
	case engine.AgentNarrative, engine.AgentCombat, "data", "summary":
	default:
		return History{}, engine.Errorf(engine.EINVALID, "Unknown agent %q: narrative, combat, summary or data.", agentName)
	}
	msgs, err := h.cfg.Store.AllHistory(ctx, id, agentName)
	if err != nil {
		return History{}, fmt.Errorf("history of %s/%s: %w", id, agentName, err)
	}
	out := History{Agent: agentName, Messages: make([]HistoryEntry, 0, len(msgs)), Calls: []store.LLMCall{}}
	for _, m := range msgs {
		var msg agent.Message
		if err := json.Unmarshal(m.Body, &msg); err != nil {
			msg = agent.Message{Role: "?", Content: string(m.Body)}
		}
		out.Messages = append(out.Messages, HistoryEntry{Turn: m.Turn, Message: msg})
	}
	calls, err := h.cfg.Store.CallsSince(ctx, time.Time{}, id, 2000)
	if err != nil {
		return History{}, err
	}
	for _, c := range calls {
		if c.Agent == agentName {
			out.Calls = append(out.Calls, c)
		}
	}
	return out, nil
}

// AdminMemories returns the table's memories of both agents, oldest first.
func (h *Hub) AdminMemories(ctx context.Context, id string) ([]store.Memory, error) {
	if _, err := h.anyTable(id); err != nil {
		return nil, err
	}
	ms, err := h.cfg.Store.Memories(ctx, id, "", 0)
	if err != nil {
		return nil, fmt.Errorf("memories of %s: %w", id, err)
	}
	return nonNil(ms), nil
}

// Uptime is how long ago the hub started.
func (h *Hub) Uptime() time.Duration {
	if h.startedAt.IsZero() {
		return 0
	}
	return h.cfg.Now().Sub(h.startedAt)
}

// Overview returns the operator's front page numbers; llm covers the
// calls since since.
func (h *Hub) Overview(ctx context.Context, since time.Time) (Overview, error) {
	o := Overview{UptimeS: int64(h.Uptime() / time.Second)}
	// Every stored table counts; the loaded ones give their live state, the
	// others their stored marks (none has a socket or a running turn).
	infos, err := h.cfg.Store.TableInfos(ctx)
	if err != nil {
		return Overview{}, err
	}
	h.mu.RLock()
	counts := make([]adminCounts, 0, len(infos))
	for _, i := range infos {
		if t, ok := h.tables[i.Table.ID]; ok {
			counts = append(counts, *t.admin.Load())
		} else {
			counts = append(counts, adminCounts{Paused: i.Flags.Paused, Closed: i.Flags.Closed})
		}
	}
	h.mu.RUnlock()
	for _, c := range counts {
		if c.Closed {
			continue
		}
		o.Tables++
		if c.Busy || c.Players+c.Spectators > 0 {
			o.TablesActive++
		}
		if c.Paused {
			o.TablesPaused++
		}
		o.Connections.Players += c.Players
		o.Connections.Spectators += c.Spectators
	}
	turns, err := h.cfg.Store.TurnTimes(ctx, h.cfg.Now().Add(-time.Hour))
	if err != nil {
		return Overview{}, err
	}
	o.TurnsLastHour = len(turns)
	calls, err := h.cfg.Store.CallsSince(ctx, since, "", 0)
	if err != nil {
		return Overview{}, err
	}
	o.LLM = Stats(calls)
	o.Models = []agent.ModelHealth{}
	if h.cfg.Health != nil {
		o.Models = h.cfg.Health.Models(h.cfg.Now())
	}
	var load *nodesLoad
	if o.Nodes, load, err = h.nodes(ctx); err != nil {
		return Overview{}, err
	}
	if load != nil {
		// On a cluster the sockets and the active tables are every
		// node's, not only those loaded here (nodes.go).
		o.Connections, o.TablesActive = load.Connections, load.Active
	}
	return o, nil
}

// LLMCalls returns the model calls since since, oldest first.
func (h *Hub) LLMCalls(ctx context.Context, since time.Time) ([]store.LLMCall, error) {
	return h.cfg.Store.CallsSince(ctx, since, "", 0)
}

// TurnTimes returns when each DM turn since since began.
func (h *Hub) TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error) {
	return h.cfg.Store.TurnTimes(ctx, since)
}

// LLMGroups aggregates the calls since since by group: "model", "agent"
// or "table"; biggest first.
func (h *Hub) LLMGroups(ctx context.Context, since time.Time, group string) ([]LLMGroup, error) {
	calls, err := h.cfg.Store.CallsSince(ctx, since, "", 0)
	if err != nil {
		return nil, err
	}
	return Group(calls, group)
}

// Group aggregates calls by "model", "agent" or "table", most calls first.
func Group(calls []store.LLMCall, group string) ([]LLMGroup, error) {
	key := map[string]func(store.LLMCall) string{
		"model": func(c store.LLMCall) string { return c.Model },
		"agent": func(c store.LLMCall) string { return c.Agent },
		"table": func(c store.LLMCall) string { return c.TableID },
	}[group]
	if key == nil {
		return nil, engine.Errorf(engine.EINVALID, "group must be model, agent or table.")
	}
	by := map[string][]store.LLMCall{}
	for _, c := range calls {
		by[key(c)] = append(by[key(c)], c)
	}
	out := make([]LLMGroup, 0, len(by))
	for k, cs := range by {
		out = append(out, LLMGroup{Key: k, LLMStats: Stats(cs)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Key < out[j].Key
	})
	return out, nil
}

// Stats aggregates calls: counts, errors by kind, latency percentiles
// (nearest rank), tokens, cache share and cost.
func Stats(calls []store.LLMCall) LLMStats {
	s := LLMStats{Calls: len(calls), ErrorsByKind: map[string]int{}}
	lat := make([]int64, 0, len(calls))
	for _, c := range calls {
		if c.Error != "" {
			s.Errors++
			k := c.ErrorKind
			if k == "" {
				k = store.CallOther
			}
			s.ErrorsByKind[k]++
		}
		lat = append(lat, c.LatencyMS)
		if c.UsageUnknown() {
			s.UsageUnknown++
		}
		s.PromptTokens += c.PromptTokens
		s.CachedTokens += c.CachedTokens
		s.CompletionTokens += c.CompletionTokens
		s.CostUSD += c.CostUSD
	}
	slices.Sort(lat)
	s.P50MS, s.P95MS = percentile(lat, 50), percentile(lat, 95)
	if s.PromptTokens > 0 {
		s.CacheShare = float64(s.CachedTokens) / float64(s.PromptTokens)
	}
	s.CostUSD = math.Round(s.CostUSD*1e6) / 1e6
	return s
}

// percentile is the nearest-rank p-th percentile of sorted values.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ClassifyError is kept beside the stats for the pages: a kind's label.
func ErrorKindLabel(k string) string {
	switch k {
	case store.CallTimeout:
		return "timeout"
	case store.CallRateLimit:
		return "rate limit"
	case store.CallServer:
		return "server error"
	case store.CallInvalidOutput:
		return "invalid output"
	case store.CallAuth:
		return "auth"
	}
	return strings.ReplaceAll(k, "_", " ")
}

// restoreAdmin brings back the operator's marks and the actions' lives
// after a restart, before the table starts. A turn that was running when
// the server stopped is pending again: it will be played once more.
func (t *table) restoreAdmin(ctx context.Context, f store.TableFlags) error {
	t.paused, t.closed = f.Paused, f.Closed
	lives, err := t.h.cfg.Store.ActionStates(ctx, t.id)
	if err != nil {
		return err
	}
	t.acts.restore(lives)
	t.updateSummary()
	return nil
}
