// Command loadgen plays many tables at once against a Tavern server on
// loopback and reports latencies and throughput. By default it starts its
// own server in-process (offline narrator, temporary SQLite file), so
// `go run ./cmd/loadgen` measures the whole stack: HTTP, websockets, the
// hub's table goroutines, turn jobs and the SQLite commits; the CPU it
// reports then includes the bots'. With -url it loads a server started
// apart (run it with TAVERN_QUOTAS=off), and with -server-pid (or
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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/web"
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
	url                         string
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
	fs.StringVar(&c.url, "url", "", "server to load (loopback only; run it with TAVERN_QUOTAS=off); empty: start one in-process, quotas off")
	fs.IntVar(&c.tables, "tables", 20, "tables played at once")
	fs.IntVar(&c.players, "players", 3, "players per table")
	fs.IntVar(&c.spectators, "spectators", 2, "spectators per table")
	fs.IntVar(&c.actions, "actions", 15, "actions per player")
	fs.DurationVar(&c.timeout, "timeout", 2*time.Minute, "stop after this long")
	fs.DurationVar(&c.think, "think", 0, "play: a player's pause after its action is narrated (±25%), and before its first (0 to this); 0: act at once, which saturates the server")
	fs.DurationVar(&c.warmup, "warmup", 0, "play: also report the latencies of the actions sent this long after the start, past the warm-up (0: don't)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file")
	serverPID := fs.Int("server-pid", 0, "pid of the server given by -url: report its CPU and memory from /proc")
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
	var srv *server
	if inProcess {
		var err error
		if srv, err = startServer(ctx); err != nil {
			return err
		}
		defer srv.close()
		c.url = srv.url
	} else if err := loopbackOnly(c.url); err != nil {
		return err
	}
	if inProcess {
		c.metrics = srv.metrics
		c.meter = procMeter{os.Getpid()} // server and bots together
	} else {
		if *metrics || *metricsToken != "" {
			c.metrics = scraped(metricsURL(c.url), *metricsToken)
		}
		c.meter = newMeter(c.url, *serverPID, c.metrics)
	}
	if *mode == "fanout" {
		fo.url, fo.meter, fo.inProcess = c.url, c.meter, inProcess
		return runFanout(ctx, fo, out)
	} else if *mode != "play" {
		return fmt.Errorf("-mode %q: want play or fanout", *mode)
	}
	fmt.Fprintf(out, "loadgen: %d tables × (%d players + %d spectators), %d actions each, think %s, against %s\n",
		c.tables, c.players, c.spectators, c.actions, c.think, c.url)
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
	metrics families // the hub's metrics
	close   func()
}

func startServer(ctx context.Context) (*server, error) {
	dir, err := os.MkdirTemp("", "tavern-loadgen-")
	if err != nil {
		return nil, err
	}
	lib, err := adventures.Load()
	if err != nil {
		return nil, err
	}
	store, err := db.Open(ctx, filepath.Join(dir, "load.db"))
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := prometheus.NewRegistry()
	h := hub.New(hub.Config{Store: store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}, Log: log, Metrics: hub.NewMetrics(reg)})
	if err := h.Start(ctx); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: web.New(web.Config{Hub: h, Players: store, Log: log, Quotas: web.Quotas{Off: true}}).Handler()}
	go hs.Serve(ln)
	return &server{url: "http://" + ln.Addr().String(), metrics: gathered(reg), close: func() {
		h.Close()
		hs.Close()
		store.Close()
		os.RemoveAll(dir)
	}}, nil
}

// stats gathers what the bots measured. Safe for concurrent use.
type stats struct {
	mu        sync.Mutex
	ack, turn []time.Duration
	// Of the actions sent once every bot (seats of them) had its first
	// action narrated: the run without its warm-up, when every table's
	// opening and the players' arrival turns are played at once.
	seats                 int64
	warmedUp              atomic.Int64 // bots with a first action narrated
	warmAt                atomic.Int64 // unix ns; 0 until every bot's was
	steadyAck, steadyTurn []time.Duration
	// Of the actions sent warmup or more after start (-warmup): with
	// -think, the players of tables opened at once act in waves for the
	// first rounds, which a warm-up of a few think times leaves out.
	start             time.Time
	warmup            time.Duration
	lateAck, lateTurn []time.Duration
	events, deltas    atomic.Int64
	acts, refusals    atomic.Int64
	fights            atomic.Int64
	failures          atomic.Int64
	firstErr          atomic.Value
}

func (s *stats) fail(err error) {
	if s.failures.Add(1) == 1 {
		s.firstErr.Store(err)
	}
}

// record records one action narrated; first: the bot's first.
func (s *stats) record(sent time.Time, ack, turn time.Duration, first bool) {
	s.mu.Lock()
	s.ack = append(s.ack, ack)
	s.turn = append(s.turn, turn)
	if at := s.warmAt.Load(); at != 0 && sent.UnixNano() >= at {
		s.steadyAck = append(s.steadyAck, ack)
		s.steadyTurn = append(s.steadyTurn, turn)
	}
	if s.warmup > 0 && sent.Sub(s.start) >= s.warmup {
		s.lateAck = append(s.lateAck, ack)
		s.lateTurn = append(s.lateTurn, turn)
	}
	s.mu.Unlock()
	if first && s.warmedUp.Add(1) == s.seats {
		s.warmAt.Store(time.Now().UnixNano())
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func (s *stats) report(out io.Writer, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.Sort(s.ack)
	slices.Sort(s.turn)
	fmt.Fprintf(out, "  %d actions in %s: %.0f actions/s, %d fights, %d refused (busy/not your turn)\n",
		s.acts.Load(), elapsed.Round(time.Millisecond), float64(s.acts.Load())/elapsed.Seconds(), s.fights.Load(), s.refusals.Load())
	fmt.Fprintf(out, "  ack latency   p50 %-9s p90 %-9s p99 %-9s max %s\n", pct(s.ack, .5), pct(s.ack, .9), pct(s.ack, .99), pct(s.ack, 1))
	fmt.Fprintf(out, "  turn latency  p50 %-9s p90 %-9s p99 %-9s max %s  (act sent → its narration)\n", pct(s.turn, .5), pct(s.turn, .9), pct(s.turn, .99), pct(s.turn, 1))
	slices.Sort(s.steadyAck)
	slices.Sort(s.steadyTurn)
	fmt.Fprintf(out, "  of the %d actions sent once all %d bots had one narrated: ack p50 %s p99 %s, turn p50 %s p99 %s\n",
		len(s.steadyAck), s.seats, pct(s.steadyAck, .5), pct(s.steadyAck, .99), pct(s.steadyTurn, .5), pct(s.steadyTurn, .99))
	if s.warmup > 0 {
		slices.Sort(s.lateAck)
		slices.Sort(s.lateTurn)
		fmt.Fprintf(out, "  of the %d actions sent %s or more after the start (-warmup): ack p50 %s p90 %s p99 %s, turn p50 %s p90 %s p99 %s\n",
			len(s.lateAck), s.warmup, pct(s.lateAck, .5), pct(s.lateAck, .9), pct(s.lateAck, .99), pct(s.lateTurn, .5), pct(s.lateTurn, .9), pct(s.lateTurn, .99))
	}
	fmt.Fprintf(out, "  events delivered to clients: %d (%.0f/s), narration deltas: %d\n", s.events.Load(), float64(s.events.Load())/elapsed.Seconds(), s.deltas.Load())
	fmt.Fprintf(out, "  failures: %d\n", s.failures.Load())
}

// per formats seconds of CPU divided by n things.
func per(cpu float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return (time.Duration(cpu * float64(time.Second) / float64(n))).Round(time.Microsecond / 10).String()
}

func post(ctx context.Context, base, path, token string, body any, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(res.Body)
		return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, bytes.TrimSpace(msg))
	}
	return json.NewDecoder(res.Body).Decode(into)
}

func newPlayer(ctx context.Context, base, name string) (token, id string, err error) {
	var p struct {
		Token string `json:"token"`
		ID    string `json:"player_id"`
	}
	err = post(ctx, base, "/api/players", "", map[string]string{"name": name}, &p)
	return p.Token, p.ID, err
}

func playTable(ctx context.Context, c config, n int, st *stats) error {
	owner, _, err := newPlayer(ctx, c.url, fmt.Sprintf("Owner %d", n))
	if err != nil {
		return err
	}
	var tbl struct {
		ID string `json:"id"`
	}
	if err := post(ctx, c.url, "/api/tables", owner, map[string]any{"name": fmt.Sprintf("Load %d", n), "seats": c.players}, &tbl); err != nil {
		return err
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i := range c.spectators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := spectate(ctx, c.url, tbl.ID, done, st); err != nil {
				st.fail(fmt.Errorf("spectator %d: %w", i, err))
			}
		}()
	}
	var players sync.WaitGroup
	var acting atomic.Int64
	acting.Store(int64(c.players))
	for i := range c.players {
		players.Add(1)
		go func() {
			defer players.Done()
			if err := playSeat(ctx, c, tbl.ID, i, &acting, st); err != nil {
				st.fail(fmt.Errorf("player %d: %w", i, err))
			}
		}()
	}
	players.Wait()
	close(done)
	wg.Wait()
	return nil
}

// batchFrames: sockets ask for batched messages (-batch), as the table
// page does.
var batchFrames bool

func dial(ctx context.Context, base, tableID, role, token string) (*websocket.Conn, error) {
	u := strings.Replace(base, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=" + role
	if batchFrames {
		u += "&batch=1"
	}
	if token != "" {
		u += "&token=" + url.QueryEscape(token)
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	closeWith(ctx, c)
	return c, nil
}

// reader pumps a socket's frames into a channel until it closes. A
// spectator's frames are only counted (follow is false): the channel
// carries none, and closes with the socket. A player's channel carries only
// the frames it follows (readFrame). A batched message (-batch) is split
// into its frames.
func reader(ctx context.Context, c *websocket.Conn, st *stats, follow bool) <-chan frame {
	ch := make(chan frame, 1024)
	go func() {
		defer close(ch)
		var frames [][]byte
		readMessages(c, func(msg []byte) error {
			frames = framesOf(msg, frames)
			return pass(ctx, frames, ch, st, follow)
		})
	}()
	return ch
}

// pass counts a message's frames and sends those a player follows.
func pass(ctx context.Context, frames [][]byte, ch chan<- frame, st *stats, follow bool) error {
	for _, raw := range frames {
		if f, ok := readFrame(raw, st, follow); ok {
			select {
			case ch <- f:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// readMessages calls fn with each message c receives until c closes or fn
// fails. The message is only fn's until fn returns: messages are read into
// pooled buffers, and without a context, which would cost the library a
// context.AfterFunc per read; whoever dials c closes it when its context
// ends (closeWith).
func readMessages(c *websocket.Conn, fn func(msg []byte) error) {
	for {
		_, r, err := c.Reader(context.Background())
		if err != nil {
			return
		}
		msg := msgBufs.Get().(*bytes.Buffer)
		msg.Reset()
		if _, err = msg.ReadFrom(r); err == nil {
			err = fn(msg.Bytes())
		}
		if msg.Cap() <= 64<<10 {
			msgBufs.Put(msg)
		}
		if err != nil {
			return
		}
	}
}

// msgBufs hold messages while they are read: a buffer per socket would
// keep each socket's largest message (its snapshot) for the whole run.
var msgBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// closeWith closes c when ctx ends, as a read given ctx would.
func closeWith(ctx context.Context, c *websocket.Conn) {
	context.AfterFunc(ctx, func() { c.CloseNow() })
}

func spectate(ctx context.Context, base, tableID string, done <-chan struct{}, st *stats) error {
	c, err := dial(ctx, base, tableID, "spectator", "")
	if err != nil {
		return err
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	frames := reader(ctx, c, st, false)
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return nil
		case _, ok := <-frames:
			if !ok {
				return errors.New("spectator socket closed")
			}
		}
	}
}

// script is what a player says outside a fight; the fights happen at the
// mill.
var script = []string{"I look around", "we go to the old mill", "I attack Snikket", "I look around",
	"back to the square", "I go to the Crooked Lantern inn", "I ask Maren about the goblins", "back to the square",
	"we go to the old mill", "I search the bodies for loot", "back to the square", "I go to Market Lane",
	"I ask Tobin about his wares", "back to the square"}

// playSeat plays one seat: c.actions actions, then it keeps taking its
// initiative turns (striking) until every player of the table is done, as
// a real player stays until the fight is over. It strikes, not defends:
// a player whose character is knocked out is skipped in the initiative and
// waits for the fight to end (after it, the character comes to), so a
// fight the others only defended in never ended, and the run stalled
// until the 2-minute turn timer (the stalls of earlier sessions' runs).
func playSeat(ctx context.Context, c config, tableID string, i int, acting *atomic.Int64, st *stats) error {
	tok, playerID, err := newPlayer(ctx, c.url, fmt.Sprintf("Bot %d", i))
	if err != nil {
		return err
	}
	var seat struct {
		Seat string `json:"seat"`
	}
	classes := []string{"warrior", "cleric", "rogue", "mage"}
	if err := post(ctx, c.url, "/api/tables/"+tableID+"/seats", tok, map[string]any{"character": map[string]any{"name": fmt.Sprintf("Bot%d", i), "class": classes[i%4]}}, &seat); err != nil {
		return err
	}
	conn, err := dial(ctx, c.url, tableID, "player", tok)
	if err != nil {
		return err
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	frames := reader(ctx, conn, st, true)
	me := "pc:" + seat.Seat
	send := func(id, text string) error {
		b, _ := json.Marshal(map[string]string{"type": "act", "id": id, "text": text})
		return conn.Write(ctx, websocket.MessageText, b)
	}
	inCombat, myTurn := false, false
	acted, step := 0, i
	rng := rand.New(rand.NewPCG(uint64(i), 7)) // seeded: runs think alike
	// think pauses for d, reading the table meanwhile (a socket that is
	// not read falls behind and is closed).
	think := func(d time.Duration) error {
		pause := time.NewTimer(d)
		defer pause.Stop()
		for {
			select {
			case <-pause.C:
				return nil
			case f, ok := <-frames:
				if !ok {
					return errors.New("socket closed while its player thought")
				}
				inCombat, myTurn = track(f, me, inCombat, myTurn)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if c.think > 0 {
		// Players who think do not all act in the same millisecond: the
		// first act comes within one think time of sitting down.
		if err := think(time.Duration(rng.Int64N(int64(c.think) + 1))); err != nil {
			return err
		}
	}
	for acted < c.actions {
		// In a fight, wait for our turn; outside, act (one at a time).
		for inCombat && !myTurn {
			f, ok := <-frames
			if !ok {
				return fmt.Errorf("socket closed waiting for its turn (acted %d)", acted)
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
		}
		text := script[step%len(script)]
		if inCombat {
			text = "I strike the nearest goblin"
		} else {
			step++
		}
		id := fmt.Sprintf("load-%d", acted)
		sent := time.Now()
		if err := send(id, text); err != nil {
			return err
		}
		// This act uses our turn: the next is ours only once a turn event
		// says so (it may come before or after the narration).
		hadTurn := myTurn
		myTurn = false
		var ackAt time.Duration
		actionID := ""
		resolved := false
		for !resolved {
			var f frame
			var ok bool
			select {
			case f, ok = <-frames:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !ok {
				return fmt.Errorf("socket closed waiting for action %q (%q, ack after %s, in combat %v)", actionID, text, ackAt, inCombat)
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
			switch {
			case f.ID == id && f.Type == "error":
				// Refused (not our turn after all, or rate limited): the
				// action was not taken; wait a moment and try again. Only
				// not_your_turn says the turn was not ours; refused
				// otherwise, we still hold it.
				st.refusals.Add(1)
				if f.Code != "not_your_turn" {
					myTurn = myTurn || hadTurn
				}
				time.Sleep(100 * time.Millisecond)
				resolved = true
				acted--
			case f.ID == id && f.Type == "ack":
				ackAt = time.Since(sent)
			case f.Type == "event" && f.Kind == "action" && f.PlayerID == playerID:
				actionID = f.ActionID
			case f.Type == "event" && f.Kind == "narration" && actionID != "" && f.ActionID == actionID:
				st.record(sent, ackAt, time.Since(sent), acted == 0)
				st.acts.Add(1)
				resolved = true
			case f.Type == "event" && f.Kind == "combat_started":
				st.fights.Add(1)
			}
		}
		acted++
		if c.think > 0 {
			if err := think(c.think*3/4 + time.Duration(rng.Int64N(int64(c.think/2)+1))); err != nil {
				return err
			}
		}
	}
	acting.Add(-1)
	for n := 0; acting.Load() > 0; {
		// Our turn may have come before we got here (while we thought
		// or waited for our last narration): the fight waits for us.
		if inCombat && myTurn {
			n++
			myTurn = false
			if err := send(fmt.Sprintf("stay-%d", n), "I strike the nearest goblin"); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case f, ok := <-frames:
			if !ok {
				return errors.New("socket closed while the others played")
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// track follows the fight: whether one is on and whether it is our turn.
func track(f frame, me string, inCombat, myTurn bool) (bool, bool) {
	if f.Type != "event" {
		return inCombat, myTurn
	}
	switch f.Kind {
	case "combat_started":
		return true, false
	case "combat_ended":
		return false, false
	case "turn":
		return true, f.Entry == me
	}
	return inCombat, myTurn
}
