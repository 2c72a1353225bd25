package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/ident"
	"tavern/internal/store"
)

// Adventures gives the hub the adventures tables are made from (built in
// and the community's); it may be a TableAdventures too.
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
	// Now and AfterFunc are the hub's clock; every time the hub reads or
	// waits for goes through them, so tests may fix or hold time. Default:
	// the time package's.
	Now func() time.Time
	// AfterFunc calls f on a goroutine of its own once d has passed, unless
	// the Timer it returns is stopped first (time.AfterFunc). The turn
	// timer, the backoff after a failed turn and Close's grace period are
	// such calls: nothing waits for them in the meantime.
	AfterFunc func(d time.Duration, f func()) Timer
	// HistoryWindow bounds how many active (not yet archived) history
	// messages a turn loads; at least 4× the window's MaxMessages are read
	// so archiving can see a full block. Default 40.
	HistoryWindow int
	// ShutdownGrace bounds how long Close waits for running turns.
	ShutdownGrace time.Duration
	// Seed returns the RNG seed of a new table (default: crypto/rand).
	// Tests fix it to make fights reproducible.
	Seed func() uint64
	// EvictAfter is how long a table stays loaded once idle: no socket,
	// subscriber, pending action, running turn, turn timer or backoff
	// (evict.go). 0: never evicted.
	EvictAfter time.Duration
	// Metrics, if set, receives the game's Prometheus metrics
	// (metrics.go); its table and socket gauges read this hub.
	Metrics *Metrics
	// Health, if set, says in the overview whether each model answers.
	Health ModelHealth
	// StoreHealth, if set, returns why the store cannot write now (a full
	// disk), or nil: while it does, turns wait and Health reports it
	// (storage.go).
	StoreHealth func() error
	// SlowAfter, if > 0, is how long the first attempt at a turn may
	// stream nothing before the table is told the DM is slow (slow.go).
	SlowAfter time.Duration
	// AttemptDeadline, if > 0, bounds one attempt at a turn: its model
	// calls and their retries together.
	AttemptDeadline time.Duration
	// SocketsPerPlayer and SocketsPerAddr bound the open websockets of
	// one player and of one client address; one more is refused 429
	// before the upgrade (PROTOCOL.md "Limits and close codes"). Default
	// 32 and 512.
	SocketsPerPlayer, SocketsPerAddr int
	// PingInterval bounds how long a socket's peer may answer no ping
	// before it is closed. Default 60s.
	PingInterval time.Duration
}

// Timer is a call scheduled by Config.AfterFunc; *time.Timer is one. Stop
// prevents the call if it has not started and reports whether it did.
type Timer interface {
	Stop() bool
}

// Hub owns every live table. Its methods are safe for concurrent use.
type Hub struct {
	cfg Config
	// closedPlayers: the players ClosePlayer shut out, by id, with the
	// reason their joining sockets are refused with (bans.go).
	closedPlayers sync.Map
	log           *slog.Logger
	ctx           context.Context
	cancel        context.CancelFunc
	// wg counts the goroutines the hub owns (spawn); spawnMu guards
	// stopping, set once Close waits on wg.
	wg       sync.WaitGroup
	spawnMu  sync.Mutex
	stopping bool
	mu       sync.RWMutex
	tables   map[string]*table // the loaded tables
	// loadMu serialises loading tables, so one is never loaded twice.
	loadMu  sync.Mutex
	started atomic.Bool
	closed  atomic.Bool
	// draining: Close hands the tables over to other nodes (nodes.go).
	draining atomic.Bool
	// startedAt is when Start began: the operator's uptime.
	startedAt time.Time
	metrics   *Metrics
	// chains numbers the tables' commit chains (store.Commit.Chain),
	// unique in the process.
	chains atomic.Uint64
	// limits holds each player's frame budget, shared by all of the
	// player's connections (3 players on 40 sockets pushed ~330
	// chat events/s when the budget was per connection).
	limitsMu sync.Mutex
	limits   map[string]*rate.Limiter
	// sockets counts the websockets being served, so that Close returns
	// only once every socket got its 1001 (11 of 480 saw 1006
	// when the process exited first). socketsMu guards socketsClosed.
	socketsMu     sync.Mutex
	socketsClosed bool
	sockets       sync.WaitGroup
	// open counts the open websockets of each player and each client
	// address (limits.go).
	open socketCounts
}

// trackSocket counts a websocket being served; false once Close waits.
func (h *Hub) trackSocket() bool {
	h.socketsMu.Lock()
	defer h.socketsMu.Unlock()
	if h.socketsClosed {
		return false
	}
	h.sockets.Add(1)
	return true
}

func (h *Hub) untrackSocket() { h.sockets.Done() }

// frameLimiter returns the frame budget of the player with id playerID.
func (h *Hub) frameLimiter(playerID string) *rate.Limiter {
	h.limitsMu.Lock()
	defer h.limitsMu.Unlock()
	if h.limits == nil {
		h.limits = map[string]*rate.Limiter{}
	}
	l, ok := h.limits[playerID]
	if !ok {
		if len(h.limits) >= maxLimiters {
			// Forget players whose budget is whole again: they are idle.
			for id, old := range h.limits {
				if old.Tokens() >= frameBurst {
					delete(h.limits, id)
				}
			}
		}
		l = rate.NewLimiter(frameRate, frameBurst)
		h.limits[playerID] = l
	}
	return l
}

// TableSpec is what a player asks for when creating a table; the engine
// owns its rules ([engine.TableSpec.Validate]).
type TableSpec = engine.TableSpec

// New returns a hub; call Start before use.
func New(cfg Config) *Hub {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
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
	if cfg.SocketsPerPlayer <= 0 {
		cfg.SocketsPerPlayer = 32
	}
	if cfg.SocketsPerAddr <= 0 {
		cfg.SocketsPerAddr = 512
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = 60 * time.Second
	}
	if cfg.Store != nil {
		cfg.Store = deadlined{cfg.Store}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{cfg: cfg, log: cfg.Log, ctx: ctx, cancel: cancel, tables: map[string]*table{}, metrics: cfg.Metrics}
	if cfg.Metrics != nil {
		cfg.Metrics.gauges.hub.Store(h)
	}
	return h
}

// Start brings back the stored tables that cannot wait: those
// with acknowledged but unresolved actions, which are played (once:
// resolving commits with the turn), and those in a fight, whose turn timer
// is armed again. Every other table loads lazily, on the first request,
// socket or timer that needs it (get), so start-up does not grow with the
// number of stored tables. Idle tables are evicted (evict.go).
func (h *Hub) Start(ctx context.Context) error {
	h.startedAt = h.cfg.Now()
	infos, err := h.cfg.Store.TableInfos(ctx)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	for _, info := range infos {
		if info.Flags.Closed || (!info.Pending && info.Mode != engine.ModeCombat) {
			continue
		}
		t, err := h.get(ctx, info.Table.ID)
		if errors.Is(err, store.ErrNotOwner) {
			continue // another node runs it (nodes.go)
		}
		if err != nil {
			return fmt.Errorf("load table %s: %w", info.Table.ID, err)
		}
		h.log.Info("resuming table", "table", t.id, "mode", info.Mode, "pending", info.Pending)
	}
	if h.cfg.EvictAfter > 0 {
		h.spawn(h.evictLoop)
	}
	h.spawn(h.storeWatch)
	h.started.Store(true)
	return nil
}

// get returns a table, loading it from the store if it is not loaded; a
// stored table that does not exist is ENOTFOUND. Each get marks the table
// used, which keeps it from being evicted (evict.go).
func (h *Hub) get(ctx context.Context, id string) (*table, error) {
	h.mu.RLock()
	t, ok := h.tables[id]
	if ok {
		t.touch()
	}
	h.mu.RUnlock()
	if ok {
		return t, nil
	}
	h.loadMu.Lock()
	defer h.loadMu.Unlock()
	h.mu.RLock()
	t, ok = h.tables[id]
	if ok {
		t.touch()
	}
	h.mu.RUnlock()
	if ok {
		return t, nil
	}
	if h.closed.Load() || h.ctx.Err() != nil {
		return nil, engine.Errorf(engine.EUNAVAILABLE, "The server is shutting down.")
	}
	ctx = context.WithoutCancel(ctx) // a table loaded is loaded for all
	data, err := h.cfg.Store.LoadTable(ctx, id)
	if engine.ErrorCode(err) == engine.ENOTFOUND {
		return nil, engine.Errorf(engine.ENOTFOUND, "Table %q not found.", id)
	}
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", id, err)
	}
	data.State.Catalogue = h.cfg.Catalogue
	t = h.newTable(data)
	if err := t.restoreAdmin(ctx, data.Flags); err != nil {
		return nil, err
	}
	if err := t.loadOwner(ctx); err != nil {
		return nil, err
	}
	t.touch()
	h.mu.Lock()
	h.tables[t.id] = t
	h.mu.Unlock()
	t.start()
	return t, nil
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
	// Each table signals when its turn ends (waitIdle); no new turn starts
	// once closed is set. One grace period bounds the whole wait.
	expired := make(chan time.Time, 1)
	grace := h.cfg.AfterFunc(h.cfg.ShutdownGrace, func() { expired <- h.cfg.Now() })
	defer grace.Stop()
	for _, t := range tables {
		if !t.waitIdle(expired) {
			break
		}
	}
	h.cancel()
	// Every table closes its sockets with 1001 as it stops; wait for the
	// handshakes (each bounded by closeTimeout) so the process does not
	// exit under them.
	h.socketsMu.Lock()
	h.socketsClosed = true
	h.socketsMu.Unlock()
	h.sockets.Wait()
	h.stopSpawning()
	h.wg.Wait()
	return nil
}

// DM names the game master running the tables.
func (h *Hub) DM() string { return h.cfg.DM }

// Classes lists the character classes a player may pick.
func (h *Hub) Classes() []engine.Class { return h.cfg.Catalogue.Classes }

// AdventureIDs lists the adventures new tables may name.
func (h *Hub) AdventureIDs() []string { return h.cfg.Adventures.IDs() }

// table returns an open table; a table the operator closed is not found
// (its history stays readable through the admin side, anyTable).
func (h *Hub) table(id string) (*table, error) {
	t, err := h.get(context.Background(), id)
	if engine.ErrorCode(err) == engine.ENOTFOUND || err == nil && t.admin.Load().Closed {
		return nil, engine.Errorf(engine.ENOTFOUND, "Table %q not found.", id)
	}
	return t, err
}

// List returns every public table's summary, newest first (ListFor adds
// a player's private ones).
func (h *Hub) List() []TableSummary {
	all := h.list()
	out := all[:0]
	for _, s := range all {
		if !s.Private {
			out = append(out, s)
		}
	}
	return out
}

// list returns every open table's summary, newest first. A loaded table
// gives its live summary; the others are read from the store, not loaded.
func (h *Hub) list() []TableSummary {
	infos, err := h.cfg.Store.TableInfos(context.Background())
	if err != nil {
		h.log.Warn("list tables", "err", err)
	}
	h.mu.RLock()
	out := make([]TableSummary, 0, max(len(infos), len(h.tables)))
	created := map[string]time.Time{}
	for _, t := range h.tables {
		if t.admin.Load().Closed {
			continue // closed by the operator: gone from the lobby
		}
		out = append(out, *t.summary.Load())
		created[t.id] = t.meta.CreatedAt
	}
	h.mu.RUnlock()
	for _, i := range infos {
		if _, loaded := created[i.Table.ID]; loaded || i.Flags.Closed {
			continue
		}
		out = append(out, h.summaryOf(i.Table, i.Mode, i.Seated, 0))
		created[i.Table.ID] = i.Table.CreatedAt
	}
	sort.Slice(out, func(i, j int) bool {
		if !created[out[i].ID].Equal(created[out[j].ID]) {
			return created[out[i].ID].After(created[out[j].ID])
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// CreateTable validates spec ([engine.TableSpec.Validate]), stores a new
// table with its own copy of the adventure's world and starts it.
func (h *Hub) CreateTable(ctx context.Context, owner engine.Player, spec TableSpec) (TableSummary, error) {
	spec, err := spec.Validate(h.cfg.Adventures.IDs())
	if err != nil {
		return TableSummary{}, err
	}
	if spec.Adventure == "" {
		spec.Adventure = h.cfg.DefaultAdventure
	}
	adv, ok := h.cfg.Adventures.Get(spec.Adventure)
	if !ok {
		return TableSummary{}, fmt.Errorf("default adventure %q is not in the library", spec.Adventure)
	}
	meta := engine.Table{
		ID: newID("t"), Name: spec.Name, Adventure: adv.ID, Seats: *spec.Seats, OwnerID: owner.ID, CreatedAt: h.cfg.Now().UTC(),
		Config:  engine.Config{Ruleset: spec.Ruleset, CombatMode: spec.CombatMode, TurnTimeoutS: *spec.TurnTimeoutS, NPCHP: npcHPConfig(spec.NPCHP)},
		Private: spec.Private,
	}
	st := engine.NewState(meta.Config, adv, h.cfg.Catalogue, h.cfg.Seed())
	intro := engine.NarrationEvent(engine.AgentNarrative, strings.TrimSpace(adv.Intro), nil, "")
	intro.Seq, intro.TS, intro.Turn = 1, meta.CreatedAt, "t0"
	if err := h.cfg.Store.CreateTable(ctx, meta, st, []engine.Event{intro}); err != nil {
		return TableSummary{}, fmt.Errorf("create table: %w", err)
	}
	h.keepAdventure(ctx, meta)
	t := h.newTable(store.TableData{Table: meta, State: st, Seq: 1})
	h.mu.Lock()
	h.tables[t.id] = t
	h.mu.Unlock()
	t.start()
	h.log.Info("table created", "table", t.id, "name", spec.Name, "ruleset", spec.Ruleset, "owner", owner.ID)
	return *t.summary.Load(), nil
}

// Sit gives player p a seat at the table with a new character, validated
// by [engine.NewCharacterSpec.Validate].
func (h *Hub) Sit(ctx context.Context, tableID string, p engine.Player, spec engine.NewCharacterSpec) (Character, error) {
	return h.SitInvited(ctx, tableID, p, spec, "")
}

// SitInvited is Sit at a table p may see with invite (a private table's
// current code, or ""): a banned player is refused.
func (h *Hub) SitInvited(ctx context.Context, tableID string, p engine.Player, spec engine.NewCharacterSpec, invite string) (Character, error) {
	// The spec is checked before the table is looked up, as the HTTP API
	// always answered a bad character before an unknown table.
	spec, err := spec.Validate(h.cfg.Catalogue.Classes)
	if err != nil {
		return Character{}, err
	}
	t, err := h.table(tableID)
	if err != nil {
		return Character{}, err
	}
	var out Character
	err = t.callOpen(ctx, func() error {
		if err := t.access.Load().sees(tableID, Viewer{PlayerID: p.ID, Invite: invite}); err != nil {
			return err
		}
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
	return t.callOpen(ctx, func() error { return t.leave(ctx, p) })
}

// Snapshot returns what a spectator may see of the table.
// A closed table's last snapshot stays readable (callers check Visible).
func (h *Hub) Snapshot(ctx context.Context, tableID string) (Snapshot, error) {
	t, err := h.anyTable(tableID)
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

// Page sizes of a table's event log (PROTOCOL.md "GET /api/tables/{id}/events").
const (
	DefaultEventsPage = 100
	MaxEventsPage     = 500
)

// Events returns up to limit events of a table after since; a limit out of
// 1..MaxEventsPage reads DefaultEventsPage.
func (h *Hub) Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error) {
	t, err := h.anyTable(tableID) // a closed table's log stays readable (Visible)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxEventsPage {
		limit = DefaultEventsPage
	}
	evs, err := h.cfg.Store.Events(ctx, tableID, since, limit)
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", tableID, err)
	}
	if evs == nil {
		evs = []engine.Event{}
	}
	return t.access.Load().redactAll(evs), nil
}

// Stream is a subscription to a table's events.
type Stream struct {
	// Snapshot is set when the subscriber was further behind than the
	// replay window (or gave no position): the table as of Snapshot.Seq.
	// Events then start after it.
	Snapshot *Snapshot
	// Events are the events after the subscriber's position (or the
	// snapshot), then live ones. It is closed when the subscription's ctx
	// ends, the hub closes, or the subscriber falls too far behind (it
	// may resume from its last seq).
	Events <-chan engine.Event
}

// Stream subscribes to a table with the websocket's resume policy
// (PROTOCOL.md): events after since are replayed when they are
// at most the replay window behind, else the subscriber gets a snapshot;
// since < 0 asks for the snapshot. The replay is read from the store
// outside the table goroutine, which only hands out the seq boundary.
func (h *Hub) Stream(ctx context.Context, tableID string, since int64) (Stream, error) {
	return h.subscribe(ctx, tableID, since, true)
}

// Subscribe streams a table's events after since, all of them however far
// behind, then live ones; the channel is closed as Stream.Events is.
func (h *Hub) Subscribe(ctx context.Context, tableID string, since int64) (<-chan engine.Event, error) {
	s, err := h.subscribe(ctx, tableID, since, false)
	return s.Events, err
}

// subBuffer holds the live events a subscriber may lag behind (while its
// replay is delivered, or a slow reader) before it is dropped.
const subBuffer = 256

func (h *Hub) subscribe(ctx context.Context, tableID string, since int64, window bool) (Stream, error) {
	t, err := h.table(tableID)
	if err != nil {
		return Stream{}, err
	}
	s := &sub{ch: make(chan engine.Event, subBuffer)}
	var boundary int64
	var snap *Snapshot
	if err := t.call(ctx, func() error {
		boundary = t.seq
		if window && (since < 0 || t.seq-since > replayLimit) {
			sn := t.snapshot()
			snap, since = &sn, t.seq
		}
		t.subs[s] = struct{}{} // live events are the ones after boundary
		return nil
	}); err != nil {
		return Stream{}, err
	}
	out := make(chan engine.Event, 64)
	// The forwarder is the hub's: it replays (since, boundary] from the
	// store, then forwards live events, and unsubscribes when done.
	started := h.spawn(func() {
		defer close(out)
		defer t.post(func() { t.unsubscribe(s) })
		forward := func(e engine.Event) bool {
			select {
			case out <- e:
				return true
			case <-ctx.Done():
			case <-h.ctx.Done():
			}
			return false
		}
		for since < boundary {
			evs, err := h.cfg.Store.Events(ctx, t.id, since, int(min(MaxEventsPage, boundary-since)))
			if err != nil {
				t.log.Warn("replay for a subscriber", "since", since, "err", err)
				return
			}
			if len(evs) == 0 {
				break
			}
			for _, e := range evs {
				if e.Seq > boundary {
					since = boundary // the rest comes live
					break
				}
				if r, _ := t.access.Load().redact(e); !forward(r) {
					return
				}
				since = e.Seq
			}
		}
		for {
			select {
			case e, ok := <-s.ch:
				if !ok || !forward(e) {
					return
				}
			case <-ctx.Done():
				return
			case <-h.ctx.Done():
				return
			}
		}
	})
	if !started {
		t.post(func() { t.unsubscribe(s) })
		return Stream{}, engine.Errorf(engine.EUNAVAILABLE, "The server is shutting down.")
	}
	return Stream{Snapshot: snap, Events: out}, nil
}

// storeTimeout bounds every store call the hub makes (the table
// goroutine must never wait on the disk without a deadline); see deadlined.
const storeTimeout = 10 * time.Second

// ServeWS upgrades the request to a websocket client of the table
// (PROTOCOL.md "Websocket"). p is the authenticated player, or nil. It
// returns once the socket has joined; a goroutine of the hub serves it
// from then on, and Close waits for it.
func (h *Hub) ServeWS(w http.ResponseWriter, r *http.Request, tableID string, p *engine.Player) {
	h.serveWS(w, r, tableID, p)
}

// newID makes a hub id (table, character, action): prefix, a dash and 16
// random hex digits.
func newID(prefix string) string { return ident.New(prefix + "-") }
