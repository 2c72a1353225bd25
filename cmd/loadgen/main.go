// Command loadgen plays many tables at once against a Tavern server on
// loopback and reports latencies and throughput. By default it starts its
// own server in-process (offline narrator, temporary SQLite file), so
// `go run ./cmd/loadgen` measures the whole stack: HTTP, websockets, the
// hub's table goroutines, turn jobs and the SQLite commits; the CPU it
// reports then includes the bots'. With -url it loads a server started
// apart (run it with TAVERN_QUOTAS=off and TAVERN_SOCKETS_PER_ADDR above
// its socket count), and with -server-pid (or
// -metrics, reading process_cpu_seconds_total, with -metrics-token if
// /metrics needs the admin token) it reports that server's own CPU per
// action and per delivered frame; reading /metrics, it also reports the
// server's own ack latencies (tavern_ack_seconds, scrape.go), which the
// bots' own include their time to read. In-process, it reads them from
// the server's registry.
//
// -mode fanout measures fan-out instead (fanout.go): N tables of players
// and spectators, one `say` per second per table, against Tavern or
// against coder/websocket's chat example (-target anchor).
//
// Every bot is a real websocket client: players act in narrative mode and
// on their own initiative turns in combat; spectators only watch. The run
// is bounded by -actions per player and by -timeout.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"tavern/internal/agent"
	"tavern/internal/offline"
	"tavern/internal/tavern"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type config struct {
	url string
	// nodes are the servers the play spreads its tables and sockets over:
	// url first, then the other nodes of a cluster (via).
	nodes                       []string
	meter                       meter
	tables, players, spectators int
	actions                     int
	timeout                     time.Duration
	// think is how long a player waits after its action is narrated
	// before the next one (±25 %); 0 acts at once, a closed loop that
	// keeps the server saturated.
	think time.Duration
	// warmup: the latencies of the actions sent this long after the start
	// are also reported apart (0: not).
	warmup time.Duration
	// metrics reads the server's metrics, for its own ack latencies
	// (serverAcks); nil: not known.
	metrics families
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	var c config
	fs.StringVar(&c.url, "url", "", "server to load (loopback only; run it with TAVERN_QUOTAS=off and TAVERN_SOCKETS_PER_ADDR above the sockets wanted), or the nodes of a cluster, comma-separated: tables and sockets are spread over them; empty: start one in-process, quotas off")
	fs.IntVar(&c.tables, "tables", 20, "tables played at once")
	fs.IntVar(&c.players, "players", 3, "players per table")
	fs.IntVar(&c.spectators, "spectators", 2, "spectators per table")
	fs.IntVar(&c.actions, "actions", 15, "actions per player")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "stop after this long")
	fs.DurationVar(&c.think, "think", 0, "play: a player's pause after its action is narrated (±25%), and before its first (0 to this); 0: act at once, which saturates the server")
	fs.DurationVar(&c.warmup, "warmup", 0, "play: also report the latencies of the actions sent this long after the start, past the warm-up (0: don't)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	serverPIDs := fs.String("server-pid", "", "pid of the server given by -url (comma-separated: of every node): report its CPU and memory from /proc")
	metrics := fs.Bool("metrics", false, "read the server's /metrics: its CPU (process_cpu_seconds_total, without -server-pid) and its own ack latencies (tavern_ack_seconds)")
	metricsToken := fs.String("metrics-token", "", "bearer token for /metrics (implies -metrics)")
	mode := fs.String("mode", "play", "play: bots play tables; fanout: say/s fan-out to many sockets (see fanout.go)")
	var fo fanoutConfig
	fo.flags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if c.tables < 1 || c.players < 1 || c.spectators < 0 || c.actions < 1 {
		return errors.New("-tables, -players and -actions must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	inProcess := c.url == ""
	c.nodes = strings.Split(c.url, ",")
	c.url = c.nodes[0]
	pids, err := parsePIDs(*serverPIDs)
	if err != nil {
		return err
	}
	if len(c.nodes) > 1 && (*metrics || *metricsToken != "" || *mode != "play") {
		return errors.New("several -url nodes: only -mode play, and -server-pid for the CPU (-metrics reads one server)")
	}
	var srv *server
	if inProcess {
		var err error
		if srv, err = startServer(ctx); err != nil {
			return err
		}
		defer srv.close()
		c.url, c.nodes = srv.url, []string{srv.url}
	} else {
		for _, u := range c.nodes {
			if err := loopbackOnly(u); err != nil {
				return err
			}
		}
	}
	if inProcess {
		c.metrics = srv.metrics
		c.meter = procMeter{os.Getpid()} // server and bots together
	} else {
		if *metrics || *metricsToken != "" {
			c.metrics = scraped(metricsURL(c.url), *metricsToken)
		}
		c.meter = newMeter(c.url, pids, c.metrics)
	}
	if *mode == "fanout" {
		fo.url, fo.meter, fo.inProcess = c.url, c.meter, inProcess
		return runFanout(ctx, fo, out)
	} else if *mode != "play" {
		return fmt.Errorf("-mode %q: want play or fanout", *mode)
	}
	fmt.Fprintf(out, "loadgen: %d tables × (%d players + %d spectators), %d actions each, think %s, against %s\n",
		c.tables, c.players, c.spectators, c.actions, c.think, strings.Join(c.nodes, ", "))
	st := &stats{seats: int64(c.tables * c.players), warmup: c.warmup}
	var before usage
	if c.meter != nil {
		var err error
		if before, err = c.meter.read(ctx); err != nil {
			return fmt.Errorf("read server usage: %w", err)
		}
	}
	var acks *serverAcks
	if c.metrics != nil {
		var err error
		if acks, err = watchAcks(ctx, c.metrics, c.warmup); err != nil {
			return fmt.Errorf("read server metrics: %w", err)
		}
	}
	start := time.Now()
	st.start = start
	var wg sync.WaitGroup
	for i := range c.tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := playTable(ctx, c, i, st); err != nil {
				st.fail(fmt.Errorf("table %d: %w", i, err))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	st.report(out, elapsed)
	if acks != nil {
		if err := acks.report(ctx, out); err != nil {
			return fmt.Errorf("read server metrics: %w", err)
		}
	}
	if c.meter != nil {
		after, err := c.meter.read(ctx)
		if err != nil {
			return fmt.Errorf("read server usage: %w", err)
		}
		who := "server"
		if inProcess {
			who = "server and bots (one process; use -url for the server alone)"
		}
		cpu := after.cpu - before.cpu
		fmt.Fprintf(out, "  CPU of the %s: %.2fs (%.0f%% of one core), %s per action, %s per delivered event\n",
			who, cpu, 100*cpu/elapsed.Seconds(), per(cpu, st.acts.Load()), per(cpu, st.events.Load()))
		if after.peakRSS > 0 {
			fmt.Fprintf(out, "  peak RSS: %.1f MiB\n", float64(after.peakRSS)/(1<<20))
		}
	}
	if n := st.failures.Load(); n > 0 {
		return fmt.Errorf("%d failures (first: %v)", n, st.firstErr.Load())
	}
	return nil
}

// via returns the node the n-th table, player or spectator goes through:
// the nodes in turn, so that each node carries its share of the sockets
// and forwards the others' to the table's owner.
func (c config) via(n int) string {
	if len(c.nodes) == 0 {
		return c.url
	}
	return c.nodes[n%len(c.nodes)]
}

// parsePIDs reads -server-pid: pids, comma-separated ("" none).
func parsePIDs(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("-server-pid %q: want process ids, comma-separated", s)
		}
		out = append(out, pid)
	}
	return out, nil
}

// loopbackOnly refuses any target but this machine.
func loopbackOnly(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("refusing to load %s: loopback addresses only", u.Host)
	}
	return nil
}

type server struct {
	url     string
	metrics families // the server's registry
	close   func()
}

// startServer starts a Tavern in this process, on loopback and a
// temporary SQLite file, as a load test wants it: quotas off, tables never
// evicted, logs from warnings up. Its DM is the offline narrator with its
// calls unlogged, as in the runs docs/performance.md compares.
func startServer(ctx context.Context) (*server, error) {
	dir, err := os.MkdirTemp("", "tavern-loadgen-")
	if err != nil {
		return nil, err
	}
	cfg := tavern.DefaultConfig()
	cfg.Addr, cfg.DB, cfg.Quotas, cfg.EvictAfter = "127.0.0.1:0", filepath.Join(dir, "load.db"), false, 0
	cfg.SocketsPerAddr = 1 << 20 // every bot dials from loopback
	cfg.LogOutput, cfg.LogLevel = os.Stderr, slog.LevelWarn
	cfg.Runner = &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}
	t, err := tavern.New(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := t.Listen(); err != nil {
		t.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	go t.Serve()
	return &server{url: t.URL(), metrics: gathered(t.Registry), close: func() {
		t.Close()
		os.RemoveAll(dir)
	}}, nil
}
