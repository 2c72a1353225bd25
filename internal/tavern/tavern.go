// Package tavern builds a running Tavern from its Config: the SQLite
// store and its migrations, the agents (the models, or the offline
// narrator), the hub and the web handler, then serves them. It is the one
// wiring: cmd/server, cmd/loadgen and the tests that need a running
// server all go through New.
//
// Start with DefaultConfig, then New, Listen and Serve; Close stops it
// all, in the order crash safety needs.
package tavern

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/dataset"
	"tavern/internal/db"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/internal/openai"
	"tavern/internal/pgdb"
	"tavern/web"
)

// The call writer queues batches without waiting for each (agent.CallQueue).
var _ agent.CallQueue = (*db.DB)(nil)

// Tavern is a built server. Its exported fields are for reading: the
// Tavern owns them and Close closes them. Listen, Serve and Close are safe
// for concurrent use; Close is safe to call twice.
type Tavern struct {
	Config Config
	Log    *slog.Logger
	// DB is the store, on either engine; Store is it when it is SQLite
	// (nil on PostgreSQL), PG when it is PostgreSQL (nil on SQLite).
	DB    Store
	Store *db.DB
	PG    *pgdb.DB
	Hub   *hub.Hub
	// Registry holds every metric /metrics serves: the Go runtime, the
	// game (Metrics) and HTTP.
	Registry *prometheus.Registry
	Metrics  *hub.Metrics
	// Handler serves every request: the built server's, or, while the
	// store is out of reach at start, the answers of waitstore.go.
	Handler http.Handler
	// DM names the game master: "offline", or the models.
	DM string
	// AdminToken is the operator's token; AdminTokenMade says it was made
	// for this run, as no token was configured.
	AdminToken     string
	AdminTokenMade bool

	unlockDB  func() error
	calls     *agent.CallWriter
	health    *agent.Health
	budget    *agent.Budget
	alerts    *alerts
	synced    *clusterSync // nil on one node
	router    *router      // nil on one node
	runner    *agent.Runner
	dataModel agent.Model
	data      *dataset.Dataset
	stopPprof func()
	http      *http.Server
	// handler is what Handler serves now; readyc is closed once the
	// store is open and the server built (Ready). stopWait and waitDone
	// stop and await the wait for a store out of reach at start.
	handler  atomic.Pointer[http.Handler]
	readyc   chan struct{}
	ready    bool // under mu
	stopWait context.CancelFunc
	waitDone chan struct{}

	mu      sync.Mutex
	ln      net.Listener
	serving bool
	closed  bool
	// lnClosed is closed once the served listener is: Close then knows no
	// request will start, and closes the hub.
	lnClosed  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New opens the store (applying its migrations), builds the agents, the
// hub and the web handler, and starts the hub. It does not listen. On
// error, what it opened is closed again.
func New(ctx context.Context, cfg Config) (_ *Tavern, err error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 15 * time.Second
	}
	t := &Tavern{Config: cfg, lnClosed: make(chan struct{}), stopPprof: func() {}}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	t.Log = slog.New(slog.DiscardHandler)
	if cfg.LogOutput != nil {
		t.Log = slog.New(slog.NewTextHandler(cfg.LogOutput, &slog.HandlerOptions{Level: cfg.LogLevel}))
	}
	if cfg.Pprof != "" {
		at, stop, err := startPprof(cfg.Pprof, t.Log)
		if err != nil {
			return nil, err
		}
		t.stopPprof = stop
		t.Log.Info("pprof listening", "addr", "http://"+at+"/debug/pprof/")
	}
	lib, err := adventures.Load()
	if err != nil {
		return nil, fmt.Errorf("load adventures: %w", err)
	}
	// PROTOCOL.md "Operator (admin)": without a configured token, a new
	// one for this run.
	t.AdminToken = cfg.AdminToken
	if t.AdminToken == "" {
		t.AdminToken, t.AdminTokenMade = rand.Text(), true
	}
	// Websockets and streams are long-lived and set their own deadlines;
	// the other routes get web.ReadTimeout per request (web.Server).
	// Headers over web.MaxHeaderBytes are answered by the handler, with
	// the JSON error body; net/http's own plain-text 431 lies above.
	t.Handler = http.HandlerFunc(t.serveHTTP)
	t.http = &http.Server{Handler: t.Handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: web.ServerMaxHeaderBytes}
	t.readyc = make(chan struct{})

	store, unlock, err := t.openStore(ctx)
	if err != nil && cfg.postgres() && pgdb.Unreachable(err) {
		// A node may start before its database: it listens at once and
		// answers 503 until the database is reachable (waitstore.go).
		t.awaitStore(ctx, lib, err)
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	t.DB, t.unlockDB = store, unlock
	if err := t.build(ctx, lib); err != nil {
		return nil, err
	}
	t.setReady()
	return t, nil
}

// build makes the rest of the server once the store is open: the
// metrics, the agents, the hub (started) and the web handler. On error,
// Close (or unbuild) releases what it made.
func (t *Tavern) build(ctx context.Context, lib *adventures.Library) (err error) {
	cfg := t.Config

	t.Registry = prometheus.NewRegistry()
	t.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	t.Metrics = hub.NewMetrics(t.Registry)
	t.alerts = newAlerts(cfg, t.DB, func(err error) { t.Log.Warn("alert history", "err", err) })
	if t.PG != nil {
		t.alerts.cluster = t.PG
	}
	if err := t.alerts.restore(ctx); err != nil {
		return fmt.Errorf("load the alert history: %w", err)
	}
	t.alerts.register(t.Registry)
	commit := func(wait time.Duration, failed bool) {
		t.Metrics.StoreCommit(wait, failed)
		t.alerts.commit(wait)
	}
	if t.Store != nil {
		t.Store.ObserveWrites(db.WriteObserver{Commit: commit, Transaction: t.Metrics.StoreTransaction, Checkpoint: t.Metrics.StoreCheckpoint})
		t.Metrics.StoreQueue(t.Store.Queued)
	} else {
		t.PG.ObserveWrites(pgdb.WriteObserver{Commit: commit, Transaction: t.Metrics.StoreTransaction})
		t.Metrics.StoreQueue(t.PG.Queued)
	}
	// The call log is written off the model path; it is closed after the
	// hub so the last turns' calls are kept.
	t.calls = agent.NewCallWriter(agent.CallWriterConfig{Store: t.DB, Observe: t.Metrics.ObserveCall, Dropped: t.Metrics.CallDropped, Log: t.Log})
	t.health = &agent.Health{}
	t.budget = &agent.Budget{DayUSD: cfg.BudgetDayUSD}
	if err := loadBudget(ctx, t.DB, t.budget, time.Now()); err != nil {
		return fmt.Errorf("load the budgets: %w", err)
	}
	t.runner, t.dataModel, t.DM = t.agents()
	if cfg.Runner != nil {
		t.runner = cfg.Runner
	}

	// The operator's data agent reads the database read-only, on
	// connections of its own; the model when there is one, else the
	// offline analyst.
	var asker web.Asker
	if t.data, err = t.openData(ctx); err != nil {
		return fmt.Errorf("open the data agent's views: %w", err)
	}
	// The offline analyst reads who is online from the hub, once it is
	// built (online is set below).
	var online func(ctx context.Context) ([]dataset.OnlinePlayer, error)
	analyst := &dataset.Analyst{Data: t.data, Online: func(ctx context.Context) ([]dataset.OnlinePlayer, error) { return online(ctx) }}
	if t.data != nil {
		asker = &agent.DataAgent{Model: t.dataModel, Data: t.data, Offline: analyst, Conversations: t.DB, Log: t.Log}
	}

	// The built-in adventures and the community's (PROTOCOL.md
	// "Adventures").
	shelf := adventures.NewShelf(lib, t.DB, nil)
	if t.PG != nil {
		// Other nodes publish, replace and hide adventures too.
		shelf.MaxAge = cfg.LeaseRenew
	}
	hc := hub.Config{
		Store: t.DB, Adventures: shelf, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: t.runner, DM: t.DM, Log: t.Log, Metrics: t.Metrics, EvictAfter: cfg.EvictAfter, Health: t.health, StoreHealth: t.DB.Unavailable,
		SlowAfter: cfg.LLMFirstToken, AttemptDeadline: cfg.LLMAttempt,
		SocketsPerPlayer: cfg.SocketsPerPlayer, SocketsPerAddr: cfg.SocketsPerAddr, PingInterval: cfg.PingInterval,
	}
	if cfg.Hub != nil {
		cfg.Hub(&hc)
	}
	h := hub.New(hc)
	t.Hub = h // closed by Close even if Start fails
	online = func(ctx context.Context) ([]dataset.OnlinePlayer, error) {
		var out []dataset.OnlinePlayer
		ps, err := t.whoIsOnline(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, dataset.OnlinePlayer{Player: p.Name, Table: p.Table, Role: p.Role})
		}
		return out, nil
	}
	if err := t.join(ctx); err != nil {
		return err
	}
	if err := h.Start(ctx); err != nil {
		return err
	}
	t.alerts.start(cfg.AlertEvery, func(err error) { t.Log.Warn("alert rules", "err", err) })
	if t.PG != nil {
		t.synced = &clusterSync{every: cfg.LeaseRenew, log: t.Log, steps: []func(context.Context) error{
			(&moderation{store: t.PG, hub: h}).step,
			syncBudget(t.DB, t.budget, time.Now),
		}}
		t.synced.start()
	}

	quotas := web.Quotas{Off: !cfg.Quotas, PlayersPerMinute: cfg.QuotaPlayers, PlayersBurst: cfg.QuotaPlayers,
		TablesPerMinute: cfg.QuotaTables, TablesBurst: max(10, cfg.QuotaTables)}
	wc := web.Config{Hub: h, Players: t.DB, Log: t.Log, AdminToken: t.AdminToken, Quotas: quotas, Ask: asker, Metrics: t.Registry, Adventures: shelf,
		Operator: &operator{store: t.DB, hub: h, budget: t.budget, alerts: t.alerts, now: time.Now}}
	if t.PG != nil {
		// Every node counts the cluster's creations.
		wc.QuotaStore = t.PG
	}
	if cfg.Web != nil {
		cfg.Web(&wc)
	}
	var served http.Handler = web.New(wc).Handler()
	if t.PG != nil {
		rt := newRouter(served, t.PG, cfg.ClusterToken, t.Log, h.InviteID)
		rt.online = h.Online
		t.router, served = rt, rt
	}
	t.handler.Store(&served)
	return nil
}

// agents builds the game master's runner from the settings: the OpenAI
// adapter for each agent when a key or a base URL is set, else the
// offline narrator (or the Narrator setting's model). Every call goes to
// the call log with its estimated cost (agent.DefaultPrices, extended by
// the Prices setting) and to the models' health for the overview. It returns
// the data agent's model too (nil when offline) and the DM's name.
func (t *Tavern) agents() (*agent.Runner, agent.Model, string) {
	cfg := t.Config
	prices := agent.Prices{}
	for k, v := range agent.DefaultPrices {
		prices[k] = v
	}
	if cfg.Prices != "" {
		extra, _ := agent.ParsePrices(cfg.Prices) // checked by New
		for k, p := range extra {
			prices[k] = p
		}
	}
	logged := func(m agent.Model) agent.Model {
		if t.health != nil {
			t.health.Watch(m.Name())
		}
		return &agent.Logged{Model: m, Log: t.calls, Prices: prices, Logger: t.Log, Health: t.health, Budget: t.budget, Observe: t.alerts.call}
	}
	base := openai.Config{Log: t.Log, CallTimeout: cfg.LLMTimeout, FirstTokenTimeout: cfg.LLMFirstToken, IdleTimeout: cfg.LLMIdle, Streaming: cfg.Streaming}
	if cfg.OpenAI != nil {
		cfg.OpenAI(&base)
	}
	ms, online := openai.ModelsFromEnv(cfg.env, base)
	if !online {
		if cfg.Runner == nil {
			t.Log.Info("no OPENAI_API_KEY or OPENAI_BASE_URL: running the offline narrator")
		}
		var dm agent.Model = offline.Narrator{}
		if cfg.Narrator != nil {
			dm = cfg.Narrator
		}
		n := logged(dm)
		return &agent.Runner{Narrative: n, Combat: n, Summary: n, Memory: t.DB, Log: t.Log, Window: cfg.window()}, nil, "offline"
	}
	if cfg.Runner == nil {
		t.Log.Info("AI game master", "narrative", ms.Narrative.Name(), "combat", ms.Combat.Name(), "summary", ms.Summary.Name())
	}
	return &agent.Runner{
		Narrative: logged(ms.Narrative), Combat: logged(ms.Combat), Summary: logged(ms.Summary),
		Memory: t.DB, Log: t.Log, Window: cfg.window(),
		// Over budget, a table is played offline (PROTOCOL.md "Operator,
		// continued").
		// Its calls are logged but not watched: the overview's models are
		// the configured ones.
		Budget: t.budget, Offline: &agent.Logged{Model: offline.Narrator{}, Log: t.calls, Prices: prices, Logger: t.Log},
	}, logged(ms.Data), ms.DM
}

// Listen opens the listener on the Addr setting, so that Addr and URL are
// known before Serve: with port 0, a free port.
func (t *Tavern) Listen() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errors.New("tavern: closed")
	}
	if t.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", t.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	t.ln = &closeSignal{Listener: ln, closed: t.lnClosed}
	// Before Ready, the node's address is set once the store is (setReady).
	if t.ready && t.PG != nil && t.Config.NodeAddr == "" {
		if err := t.PG.SetAddr(context.Background(), ln.Addr().String()); err != nil {
			return fmt.Errorf("listen: %w", err)
		}
	}
	return nil
}

// Addr is the address Listen listens on; empty before Listen.
func (t *Tavern) Addr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ln == nil {
		return ""
	}
	return t.ln.Addr().String()
}

// URL is the base URL of the lobby, http://Addr; empty before Listen.
func (t *Tavern) URL() string {
	if a := t.Addr(); a != "" {
		return "http://" + a
	}
	return ""
}

// Serve serves HTTP on the listener (Listen is called if it was not) until
// Close, and then returns nil, as it does at once once Close was called;
// any other error is returned as it comes. It serves once: a second call
// while it serves returns an error.
func (t *Tavern) Serve() error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return nil
	}
	if err := t.Listen(); err != nil {
		return err
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	if t.serving {
		t.mu.Unlock()
		return errors.New("tavern: already serving")
	}
	t.serving = true
	ln := t.ln
	t.mu.Unlock()
	if err := t.http.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops the server and releases everything New opened. First it
// stops accepting (the listener closes at once, requests in flight get
// ShutdownTimeout); then it closes the hub, which sends every websocket
// 1001, ends the streams and lets running turns finish or roll back; then
// it waits for the rest, and closes the call log, the data agent's views
// and the store, in that order. It is safe to call twice, and returns the
// first call's error.
func (t *Tavern) Close() error {
	t.closeOnce.Do(func() { t.closeErr = t.close() })
	return t.closeErr
}

func (t *Tavern) close() error {
	if t.stopWait != nil {
		// Whatever the wait built is in t's fields once it has returned.
		t.stopWait()
		<-t.waitDone
	}
	t.mu.Lock()
	t.closed = true
	serving, ln := t.serving, t.ln
	t.mu.Unlock()
	var errs []error
	shut := make(chan error, 1)
	if serving {
		ctx, cancel := context.WithTimeout(context.Background(), t.Config.ShutdownTimeout)
		defer cancel()
		go func() { shut <- t.http.Shutdown(ctx) }()
		<-t.lnClosed
	} else {
		if ln != nil {
			errs = append(errs, ln.Close())
		}
		shut <- nil
	}
	if t.alerts != nil {
		t.alerts.close()
	}
	t.synced.close()
	if t.Hub != nil {
		t.drain()
		// A commit the store retries on a full disk would hold its table,
		// and so the hub's close, for as long as the disk stays full; one
		// that met a passing storage error lands if retried a little. So
		// the retries stop only after ShutdownTimeout.
		giveUp := time.AfterFunc(t.Config.ShutdownTimeout, t.DB.StopRetries)
		errs = append(errs, t.Hub.Close())
		giveUp.Stop()
	}
	if err := <-shut; !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	if t.calls != nil {
		errs = append(errs, t.calls.Close())
	}
	if t.data != nil {
		errs = append(errs, t.data.Close())
	}
	if t.DB != nil {
		errs = append(errs, t.DB.Close())
	}
	if t.unlockDB != nil {
		errs = append(errs, t.unlockDB())
	}
	t.stopPprof()
	return errors.Join(errs...)
}

// closeSignal is a listener that says when it has been closed.
type closeSignal struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeSignal) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.closed) })
	return err
}
