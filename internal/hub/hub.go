package hub

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/ident"
)

// Adventures gives the hub the built-in adventures.
type Adventures interface {
	Get(id string) (*engine.Adventure, bool)
	IDs() []string
}

// Config configures a Hub.
type Config struct {
	Store      Store
	Adventures Adventures
	// DefaultAdventure is used when a new table names none.
	DefaultAdventure string
	Catalogue        *engine.Catalogue
	Runner           *agent.Runner
	// DM names the game master shown to clients ("offline" or a model).
	DM  string
	Log *slog.Logger
	// Now is the clock (tests may fix it).
	Now func() time.Time
	// HistoryWindow bounds how many active (not yet archived) history
	// messages a turn loads; at least 4× the window's MaxMessages are read
	// so archiving can see a full block. Default 40.
	HistoryWindow int
	// ShutdownGrace bounds how long Close waits for running turns.
	ShutdownGrace time.Duration
	// Seed returns the RNG seed of a new table (default: crypto/rand).
	// Tests fix it to make fights reproducible.
	Seed func() uint64
}

// Hub owns every live table. Its methods are safe for concurrent use.
type Hub struct {
	cfg     Config
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.RWMutex
	tables  map[string]*table
	started atomic.Bool
	closed  atomic.Bool
}

// TableSpec is what a player asks for when creating a table.
type TableSpec struct {
	Name         string
	Adventure    string
	Ruleset      string
	CombatMode   string
	Seats        int
	TurnTimeoutS *int
}

// New returns a hub; call Start before use.
func New(cfg Config) *Hub {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HistoryWindow == 0 {
		cfg.HistoryWindow = 40
	}
	if cfg.ShutdownGrace == 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	if cfg.Seed == nil {
		cfg.Seed = ident.Seed
	}
	if cfg.DM == "" {
		cfg.DM = "offline"
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{cfg: cfg, log: cfg.Log, ctx: ctx, cancel: cancel, tables: map[string]*table{}}
}

// Start loads every stored table and resumes it: a table comes back in the
// mode, round and turn it was in, and its acknowledged but unresolved
// actions are played (once: resolving commits with the turn).
func (h *Hub) Start(ctx context.Context) error {
	ts, err := h.cfg.Store.Tables(ctx)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	for _, meta := range ts {
		data, err := h.cfg.Store.LoadTable(ctx, meta.ID)
		if err != nil {
			return fmt.Errorf("load table %s: %w", meta.ID, err)
		}
		data.State.Catalogue = h.cfg.Catalogue
		t := h.newTable(data)
		h.mu.Lock()
		h.tables[t.id] = t
		h.mu.Unlock()
		t.start()
		if len(data.Pending) > 0 || data.State.Game.Mode == engine.ModeCombat {
			h.log.Info("resuming table", "table", t.id, "mode", data.State.Game.Mode, "pending", len(data.Pending))
		}
	}
	h.started.Store(true)
	return nil
}

// Ready reports whether Start has completed.
func (h *Hub) Ready() bool { return h.started.Load() && !h.closed.Load() }

// Close stops every table: running turns get ShutdownGrace to finish (an
// unfinished turn is rolled back and its action stays pending), websockets
// are closed with 1001 so clients reconnect. Safe to call twice.
func (h *Hub) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	h.mu.RLock()
	tables := make([]*table, 0, len(h.tables))
	for _, t := range h.tables {
		tables = append(tables, t)
	}
	h.mu.RUnlock()
	done := make(chan struct{})
	go func() {
		for _, t := range tables {
			t.waitIdle(h.cfg.ShutdownGrace)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(h.cfg.ShutdownGrace):
	}
	h.cancel()
	h.wg.Wait()
	return nil
}

// DM names the game master running the tables.
func (h *Hub) DM() string { return h.cfg.DM }

// Classes lists the character classes a player may pick.
func (h *Hub) Classes() []engine.Class { return h.cfg.Catalogue.Classes }

// AdventureIDs lists the built-in adventures.
func (h *Hub) AdventureIDs() []string { return h.cfg.Adventures.IDs() }

func (h *Hub) table(id string) (*table, error) {
	h.mu.RLock()
	t, ok := h.tables[id]
	h.mu.RUnlock()
	if !ok {
		return nil, engine.Errorf(engine.ENOTFOUND, "Table %q not found.", id)
	}
	return t, nil
}

// List returns every table's summary, newest first.
func (h *Hub) List() []TableSummary {
	h.mu.RLock()
	out := make([]TableSummary, 0, len(h.tables))
	created := map[string]time.Time{}
	for _, t := range h.tables {
		out = append(out, *t.summary.Load())
		created[t.id] = t.meta.CreatedAt
	}
	h.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if !created[out[i].ID].Equal(created[out[j].ID]) {
			return created[out[i].ID].After(created[out[j].ID])
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// CreateTable validates spec, stores a new table with its own copy of the
// adventure's world and starts it.
func (h *Hub) CreateTable(ctx context.Context, owner engine.Player, spec TableSpec) (TableSummary, error) {
	name, err := cleanName(spec.Name, "table name", 64)
	if err != nil {
		return TableSummary{}, err
	}
	if spec.Adventure == "" {
		spec.Adventure = h.cfg.DefaultAdventure
	}
	adv, ok := h.cfg.Adventures.Get(spec.Adventure)
	if !ok {
		return TableSummary{}, engine.Errorf(engine.EINVALID, "Unknown adventure %q; adventures: %s.", spec.Adventure, strings.Join(h.cfg.Adventures.IDs(), ", "))
	}
	if spec.Ruleset == "" {
		spec.Ruleset = engine.RulesetD100
	}
	if !engine.ValidRuleset(spec.Ruleset) {
		return TableSummary{}, engine.Errorf(engine.EINVALID, "Unknown ruleset %q; use d100 or d20.", spec.Ruleset)
	}
	if spec.CombatMode == "" {
		spec.CombatMode = engine.CombatTactical
	}
	if spec.CombatMode != engine.CombatTactical && spec.CombatMode != engine.CombatNarrative {
		return TableSummary{}, engine.Errorf(engine.EINVALID, "Unknown combat mode %q; use tactical or narrative.", spec.CombatMode)
	}
	if spec.Seats == 0 {
		spec.Seats = 4
	}
	if spec.Seats < 1 || spec.Seats > 8 {
		return TableSummary{}, engine.Errorf(engine.EINVALID, "A table has 1 to 8 seats.")
	}
	timeout := 120
	if spec.TurnTimeoutS != nil {
		timeout = *spec.TurnTimeoutS
	}
	if timeout < 0 || timeout > 3600 {
		return TableSummary{}, engine.Errorf(engine.EINVALID, "turn_timeout_s must be between 0 (off) and 3600.")
	}
	meta := engine.Table{
		ID: newID("t"), Name: name, Adventure: adv.ID, Seats: spec.Seats, OwnerID: owner.ID, CreatedAt: h.cfg.Now().UTC(),
		Config: engine.Config{Ruleset: spec.Ruleset, CombatMode: spec.CombatMode, TurnTimeoutS: timeout},
	}
	st := engine.NewState(meta.Config, adv, h.cfg.Catalogue, h.cfg.Seed())
	intro := engine.Event{Seq: 1, TS: meta.CreatedAt, Kind: "narration", Turn: "t0", Data: map[string]any{"agent": engine.AgentNarrative, "text": strings.TrimSpace(adv.Intro)}}
	if err := h.cfg.Store.CreateTable(ctx, meta, st, []engine.Event{intro}); err != nil {
		return TableSummary{}, fmt.Errorf("create table: %w", err)
	}
	t := h.newTable(engine.TableData{Table: meta, State: st, Seq: 1})
	h.mu.Lock()
	h.tables[t.id] = t
	h.mu.Unlock()
	t.start()
	h.log.Info("table created", "table", t.id, "name", name, "ruleset", spec.Ruleset, "owner", owner.ID)
	return *t.summary.Load(), nil
}

// Sit gives player p a seat at the table with a new character.
func (h *Hub) Sit(ctx context.Context, tableID string, p engine.Player, spec engine.NewCharacterSpec) (Character, error) {
	t, err := h.table(tableID)
	if err != nil {
		return Character{}, err
	}
	name, err := cleanName(spec.Name, "character name", 32)
	if err != nil {
		return Character{}, err
	}
	spec.Name = name
	if len(spec.Backstory) > 2000 {
		return Character{}, engine.Errorf(engine.EINVALID, "A backstory has at most 2000 characters.")
	}
	var out Character
	err = t.call(ctx, func() error {
		var err error
		out, err = t.sit(ctx, p, spec)
		return err
	})
	return out, err
}

// Leave frees p's seat at the table.
func (h *Hub) Leave(ctx context.Context, tableID string, p engine.Player) error {
	t, err := h.table(tableID)
	if err != nil {
		return err
	}
	return t.call(ctx, func() error { return t.leave(ctx, p) })
}

// Snapshot returns what a spectator may see of the table.
func (h *Hub) Snapshot(ctx context.Context, tableID string) (Snapshot, error) {
	t, err := h.table(tableID)
	if err != nil {
		return Snapshot{}, err
	}
	var s Snapshot
	err = t.call(ctx, func() error {
		s = t.snapshot()
		return nil
	})
	return s, err
}

// Events returns up to limit events of a table after since.
func (h *Hub) Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error) {
	if _, err := h.table(tableID); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	evs, err := h.cfg.Store.Events(ctx, tableID, since, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", tableID, err)
	}
	if evs == nil {
		evs = []engine.Event{}
	}
	return evs, nil
}

// Subscribe streams a table's events after since, then live ones. The
// channel is closed when ctx ends, the hub closes, or the subscriber falls
// too far behind (it may resubscribe from its last seq).
func (h *Hub) Subscribe(ctx context.Context, tableID string, since int64) (<-chan engine.Event, error) {
	t, err := h.table(tableID)
	if err != nil {
		return nil, err
	}
	s := &sub{ch: make(chan engine.Event, 256)}
	if err := t.call(ctx, func() error { return t.subscribe(ctx, s, since) }); err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-h.ctx.Done():
		}
		t.post(func() { t.unsubscribe(s) })
	}()
	return s.ch, nil
}

// ServeWS upgrades the request to a websocket client of the table
// (PROTOCOL.md "Websocket"). p is the authenticated player, or nil.
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request, tableID string, p *engine.Player) {
	h.serveWS(w, r, tableID, p)
}

// cleanName trims s and checks it is 1..max characters without control
// characters.
func cleanName(s, what string, maxLen int) (string, error) {
	s = strings.TrimSpace(s)
	n := len([]rune(s))
	if n == 0 || n > maxLen {
		return "", engine.Errorf(engine.EINVALID, "A %s has 1 to %d characters.", what, maxLen)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "", engine.Errorf(engine.EINVALID, "A %s may not contain control characters.", what)
		}
	}
	return s, nil
}

// newID makes a hub id (table, character, action): prefix, a dash and 16
// random hex digits.
func newID(prefix string) string { return ident.New(prefix + "-") }
