// Command server runs Tavern: one binary, one SQLite file. See README.md.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
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
	"tavern/web"
)

// The call writer queues batches without waiting for each (agent.CallQueue).
var _ agent.CallQueue = (*db.DB)(nil)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tavern:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tavern", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", envOr(getenv, "TAVERN_ADDR", "127.0.0.1:8080"), "listen address (env TAVERN_ADDR)")
	dbPath := fs.String("db", envOr(getenv, "TAVERN_DB", "data/tavern.db"), "SQLite file (env TAVERN_DB)")
	logLevel := fs.String("log-level", envOr(getenv, "TAVERN_LOG_LEVEL", "info"), "debug, info, warn or error")
	pprofAddr := fs.String("pprof", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060 (off when empty)")
	quotasEnv := envOr(getenv, "TAVERN_QUOTAS", "on")
	quotaPlayers := fs.Int("quota-players", envInt(getenv, "TAVERN_QUOTA_PLAYERS"), "players one client address may create a minute (bursts as many; 0: default 20; env TAVERN_QUOTA_PLAYERS)")
	quotaTables := fs.Int("quota-tables", envInt(getenv, "TAVERN_QUOTA_TABLES"), "tables one client address may create a minute (bursts of 10 at least; 0: default 6; env TAVERN_QUOTA_TABLES)")
	evictEnv := envOr(getenv, "TAVERN_EVICT_AFTER", "10m")
	evictAfter := fs.String("evict-after", evictEnv, "unload a table idle this long (no socket, action, turn or timer; 0: never; env TAVERN_EVICT_AFTER)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	evict, err := time.ParseDuration(*evictAfter)
	if err != nil || evict < 0 {
		return fmt.Errorf("bad -evict-after %q: want a duration such as 10m, or 0", *evictAfter)
	}
	if quotasEnv != "on" && quotasEnv != "off" {
		return fmt.Errorf("bad TAVERN_QUOTAS %q: want on or off", quotasEnv)
	}
	quotas := web.Quotas{Off: quotasEnv == "off", PlayersPerMinute: *quotaPlayers, PlayersBurst: *quotaPlayers,
		TablesPerMinute: *quotaTables, TablesBurst: max(10, *quotaTables)}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("bad -log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if *pprofAddr != "" {
		at, stop, err := startPprof(*pprofAddr, log)
		if err != nil {
			return err
		}
		defer stop()
		log.Info("pprof listening", "addr", "http://"+at+"/debug/pprof/")
	}

	lib, err := adventures.Load()
	if err != nil {
		return fmt.Errorf("load adventures: %w", err)
	}
	store, err := db.Open(ctx, *dbPath)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()

	// One Prometheus registry for everything (/metrics, behind the admin
	// token): the Go runtime, the game (hub.Metrics) and HTTP (web).
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := hub.NewMetrics(reg)
	store.ObserveWrites(db.WriteObserver{Commit: metrics.StoreCommit, Transaction: metrics.StoreTransaction, Checkpoint: metrics.StoreCheckpoint})
	metrics.StoreQueue(store.Queued)
	// The call log is written off the model path, feeding the DB and the
	// metrics; closed after the hub so the last turns' calls are kept. The
	// store queues each batch with its writer (agent.CallQueue).
	calls := agent.NewCallWriter(agent.CallWriterConfig{Store: store, Observe: metrics.ObserveCall, Dropped: metrics.CallDropped, Log: log})
	defer calls.Close()
	runner, dataModel, dmName, err := newRunner(getenv, store, calls, log)
	if err != nil {
		return err
	}
	// The operator's data agent (issue 10) reads the file read-only on
	// connections of its own; the model when set, else the offline analyst.
	data, err := dataset.Open(ctx, *dbPath)
	if err != nil {
		return fmt.Errorf("open the data agent's views: %w", err)
	}
	defer data.Close()
	asker := &agent.DataAgent{Model: dataModel, Data: data, Offline: &dataset.Analyst{Data: data}, Conversations: store, Log: log}
	h := hub.New(hub.Config{
		Store: store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: runner,
		DM:     dmName, Log: log, Metrics: metrics, EvictAfter: evict,
	})
	if err := h.Start(ctx); err != nil {
		return err
	}
	defer h.Close() // on early returns; Close is safe to call twice

	// The operator's token: TAVERN_ADMIN_TOKEN, or a fresh one printed
	// once below (PROTOCOL.md "Operator (admin)").
	adminToken := getenv("TAVERN_ADMIN_TOKEN")
	generated := adminToken == ""
	if generated {
		adminToken = rand.Text()
	}
	srv := web.New(web.Config{Hub: h, Players: store, Log: log, AdminToken: adminToken, Quotas: quotas, Ask: asker, Metrics: reg})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	stopped := &closeSignal{Listener: ln, closed: make(chan struct{})}
	// Websockets and streams are long-lived and set their own deadlines;
	// the other routes get web.ReadTimeout per request (web.Server).
	httpSrv := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	fmt.Fprintf(stdout, "Tavern is open: http://%s/ (DM: %s, database: %s)\n", ln.Addr(), dmName, *dbPath)
	if generated {
		fmt.Fprintf(stdout, "Admin: http://%s/admin?token=%s\n", ln.Addr(), adminToken)
	} else {
		fmt.Fprintf(stdout, "Admin: http://%s/admin (token: TAVERN_ADMIN_TOKEN)\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(stopped) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// First stop accepting (Shutdown closes the listener at once, then
	// waits for requests in flight); then close the hub, which sends every
	// websocket 1001 and waits for the handshakes, ends the streams, and
	// lets running turns finish or roll back; then wait for the rest.
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- httpSrv.Shutdown(sctx) }()
	<-stopped.closed
	_ = h.Close()
	if err := <-shut; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
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

// newRunner builds the agents' runner from the environment: the models
// of pickModels; every call logged with its estimated cost (prices:
// agent.DefaultPrices, extended by TAVERN_PRICES); the memory tools over
// the store. Model calls go to calls (the call log). It returns the data
// agent's logged model too (nil when offline) and the DM's name for the UI.
func newRunner(getenv func(string) string, store *db.DB, calls agent.CallLog, log *slog.Logger) (*agent.Runner, agent.Model, string, error) {
	base := openai.Config{Log: log}
	for _, d := range []struct {
		env string
		to  *time.Duration
	}{
		{"TAVERN_LLM_TIMEOUT", &base.CallTimeout},
		// Time to the first streamed chunk and between two chunks (issue
		// 11): a hung request is retried instead of freezing the table.
		{"TAVERN_LLM_FIRST_TOKEN_TIMEOUT", &base.FirstTokenTimeout},
		{"TAVERN_LLM_IDLE_TIMEOUT", &base.IdleTimeout},
	} {
		if v := getenv(d.env); v != "" {
			p, err := time.ParseDuration(v)
			if err != nil || p <= 0 {
				return nil, nil, "", fmt.Errorf("bad %s %q: want a duration such as 60s", d.env, v)
			}
			*d.to = p
		}
	}
	prices := agent.Prices{}
	for k, v := range agent.DefaultPrices {
		prices[k] = v
	}
	if v := getenv("TAVERN_PRICES"); v != "" {
		extra, err := agent.ParsePrices(v)
		if err != nil {
			return nil, nil, "", fmt.Errorf("bad TAVERN_PRICES: %w", err)
		}
		for k, p := range extra {
			prices[k] = p
		}
	}
	ms := pickModels(getenv, base)
	if ms.Online {
		log.Info("AI game master", "narrative", ms.Narrative.Name(), "combat", ms.Combat.Name(), "summary", ms.Summary.Name())
	} else {
		log.Info("no OPENAI_API_KEY or OPENAI_BASE_URL: running the offline narrator")
	}
	logged := func(m agent.Model) agent.Model {
		return &agent.Logged{Model: m, Log: calls, Prices: prices, Logger: log}
	}
	var data agent.Model
	if ms.Data != nil {
		data = logged(ms.Data)
	}
	return &agent.Runner{
		Narrative: logged(ms.Narrative), Combat: logged(ms.Combat), Summary: logged(ms.Summary),
		Memory: store, Log: log,
	}, data, ms.DM, nil
}

// models is the model of each agent.
type models struct {
	Narrative, Combat, Summary agent.Model
	// Data is the data agent's model (TAVERN_MODEL_DATA); nil when
	// offline, where the offline analyst answers instead.
	Data agent.Model
	// DM names the game master for the UI: "offline", or the model ids
	// (and the server's host when it is not OpenAI's).
	DM string
	// Online is false when the offline narrator runs.
	Online bool
}

// pickModels chooses the models: the OpenAI adapter for each agent when
// OPENAI_API_KEY or OPENAI_BASE_URL is set (models from TAVERN_MODEL and
// TAVERN_MODEL_NARRATIVE/COMBAT/SUMMARY, see openai.ModelsFromEnv), else
// the offline narrator for every agent. base supplies the adapter's other
// settings (timeouts, logger).
func pickModels(getenv func(string) string, base openai.Config) models {
	ms, ok := openai.ModelsFromEnv(getenv, base)
	if !ok {
		n := offline.Narrator{}
		return models{Narrative: n, Combat: n, Summary: n, DM: "offline"}
	}
	return models{Narrative: ms.Narrative, Combat: ms.Combat, Summary: ms.Summary, Data: ms.Data, DM: ms.DM, Online: true}
}

// envInt reads a whole number from the environment; empty or junk is 0
// (the default), as the flag's usage says.
func envInt(getenv func(string) string, key string) int {
	n, _ := strconv.Atoi(getenv(key))
	return n
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}
