package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// fanoutConfig is -mode fanout: -tables tables of -fanout-players players
// and -fanout-spectators spectators, every socket open before the clock
// starts; then for -duration one `say` per second per table (spread over
// the second), each carrying its send time, which every socket of the table
// receives. Against -target anchor (coder/websocket's chat example, one
// room) it opens the same number of sockets and publishes one message a
// second to all of them: the same frames per second.
type fanoutConfig struct {
	url                 string
	meter               meter
	target              string
	tables              int
	players, spectators int
	duration, drain     time.Duration
	dialers             int
	// burst: every table sends at the same instant of each second, as
	// the anchor's one publish reaches all its sockets at once, instead of
	// spread over the second.
	burst bool
	// inProcess: the server runs in loadgen's process, so its usage
	// includes the clients'.
	inProcess bool
}

func (c *fanoutConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.target, "target", "tavern", "fanout: tavern or anchor (the chat example at -url)")
	fs.IntVar(&c.tables, "fanout-tables", 800, "fanout: tables (anchor: sockets = tables × (players + spectators))")
	fs.IntVar(&c.players, "fanout-players", 4, "fanout: player sockets per table")
	fs.IntVar(&c.spectators, "fanout-spectators", 16, "fanout: spectator sockets per table")
	fs.DurationVar(&c.duration, "duration", 20*time.Second, "fanout: how long to send")
	fs.DurationVar(&c.drain, "drain", 2*time.Second, "fanout: how long after the last send a frame still counts")
	fs.BoolVar(&batchFrames, "batch", false, "sockets ask for batched messages (?batch=1), as the table page does")
	fs.IntVar(&c.dialers, "dialers", 32, "fanout: sockets and API calls made at once while setting up")
	fs.BoolVar(&c.burst, "fanout-burst", false, "fanout: every table sends at the start of each second instead of spread over it")
}

// marker starts every measured message; its send time follows in
// nanoseconds since the epoch.
const marker = "fo@"

// receipts counts the measured frames and their delivery latencies.
type receipts struct {
	mu        sync.Mutex
	latencies []time.Duration
	deadline  atomic.Int64 // unix ns after which frames no longer count
	late      atomic.Int64
}

func (r *receipts) count() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.latencies))
}

// got records the send time after each marker in b (a batched message
// may hold several).
func (r *receipts) got(b []byte) {
	for {
		i := bytes.Index(b, []byte(marker))
		if i < 0 {
			return
		}
		b = b[i+len(marker):]
		r.got1(b)
	}
}

func (r *receipts) got1(b []byte) {
	j := 0
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	sent, err := strconv.ParseInt(string(b[:j]), 10, 64)
	if err != nil {
		return
	}
	now := time.Now()
	if d := r.deadline.Load(); d != 0 && now.UnixNano() > d {
		r.late.Add(1)
		return
	}
	r.mu.Lock()
	r.latencies = append(r.latencies, now.Sub(time.Unix(0, sent)))
	r.mu.Unlock()
}

// sockets is what setup opened: every socket, and one sender per table.
type sockets struct {
	conns []*websocket.Conn
	send  []func(ctx context.Context, n int) error
}

func runFanout(ctx context.Context, c fanoutConfig, out io.Writer) error {
	if c.tables < 1 || c.players < 1 || c.spectators < 0 {
		return errors.New("fanout needs -fanout-tables and -fanout-players ≥ 1")
	}
	n := c.tables * (c.players + c.spectators)
	fmt.Fprintf(out, "fanout: %s at %s, %d sockets", c.target, c.url, n)
	if c.target == "tavern" {
		fmt.Fprintf(out, " (%d tables × (%d + %d)), one say/s per table", c.tables, c.players, c.spectators)
		if c.burst {
			fmt.Fprint(out, ", all at the start of each second")
		}
	} else {
		fmt.Fprint(out, " in one room, one publish/s")
	}
	fmt.Fprintf(out, "; load average %s\n", loadAverage())
	var base usage
	if c.meter != nil {
		var err error
		if base, err = c.meter.read(ctx); err != nil {
			return fmt.Errorf("read server usage: %w", err)
		}
	}
	rc := &receipts{}
	setupStart := time.Now()
	var s *sockets
	var err error
	switch c.target {
	case "tavern":
		s, err = tavernSockets(ctx, c, rc)
	case "anchor":
		s, err = anchorSockets(ctx, c, n, rc)
	default:
		return fmt.Errorf("-target %q: want tavern or anchor", c.target)
	}
	if s != nil {
		defer func() {
			for _, conn := range s.conns {
				conn.CloseNow()
			}
		}()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  %d sockets open in %s\n", len(s.conns), time.Since(setupStart).Round(time.Millisecond))
	var before usage
	if c.meter != nil {
		if before, err = c.meter.read(ctx); err != nil {
			return fmt.Errorf("read server usage: %w", err)
		}
		if before.rss > 0 {
			fmt.Fprintf(out, "  server RSS with every socket open: %.1f MiB (%.1f KiB per socket, %.1f KiB before the sockets)\n",
				float64(before.rss)/(1<<20), float64(before.rss-base.rss)/1024/float64(len(s.conns)), float64(base.rss)/1024)
		}
	}

	// Send: sender i fires at i/len(send) of every second (-fanout-burst:
	// all at its start).
	start := time.Now()
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	for i, send := range s.send {
		wg.Add(1)
		go func() {
			defer wg.Done()
			offset := time.Duration(int64(time.Second) * int64(i) / int64(len(s.send)))
			if c.burst {
				offset = 0
			}
			for k := 0; ; k++ {
				at := start.Add(offset + time.Duration(k)*time.Second)
				if at.Sub(start) >= c.duration {
					return
				}
				select {
				case <-time.After(time.Until(at)):
				case <-ctx.Done():
					return
				}
				if err := send(ctx, k); err != nil {
					failed.Add(1)
					continue
				}
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	lastSend := time.Now()
	rc.deadline.Store(lastSend.Add(c.drain).UnixNano())
	perSend := c.players + c.spectators
	if c.target == "anchor" {
		perSend = n
	}
	want := sent.Load() * int64(perSend)
	// Wait for every frame, or until the drain time is up.
	for time.Since(lastSend) < c.drain && ctx.Err() == nil && rc.count() < want {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	load := loadAverage()
	var after usage
	if c.meter != nil {
		if after, err = c.meter.read(ctx); err != nil {
			return fmt.Errorf("read server usage: %w", err)
		}
	}

	rc.mu.Lock()
	lat := slices.Clone(rc.latencies)
	rc.mu.Unlock()
	slices.Sort(lat)
	fmt.Fprintf(out, "  %d sends (%d failed) in %s, %d frames delivered within %s of the last send: %.2f%% of %d (%d late)\n",
		sent.Load(), failed.Load(), lastSend.Sub(start).Round(time.Millisecond), len(lat), c.drain,
		100*float64(len(lat))/float64(max(want, 1)), want, rc.late.Load())
	fmt.Fprintf(out, "  delivery latency p50 %s p90 %s p99 %s max %s; load average %s\n", pct(lat, .5), pct(lat, .9), pct(lat, .99), pct(lat, 1), load)
	if c.meter != nil {
		cpu := after.cpu - before.cpu
		who := "server"
		if c.inProcess {
			who = "server and clients (one process; use -url for the server alone)"
		}
		fmt.Fprintf(out, "  CPU of the %s (%s): %.2fs (%.0f%% of one core), %s per delivered frame\n",
			who, c.meter.what(), cpu, 100*cpu/elapsed.Seconds(), per(cpu, int64(len(lat))))
		if after.peakRSS > 0 {
			fmt.Fprintf(out, "  server peak RSS %.1f MiB: %.1f KiB per socket\n",
				float64(after.peakRSS)/(1<<20), float64(after.peakRSS)/1024/float64(len(s.conns)))
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on at most k goroutines and returns the first
// error.
func parallel(ctx context.Context, n, k int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range min(n, max(k, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return ctx.Err()
}

// drainSocket reads a socket until it closes, recording measured frames.
func drainSocket(conn *websocket.Conn, rc *receipts) {
	go readMessages(conn, func(msg []byte) error {
		rc.got(msg)
		return nil
	})
}

func tavernSockets(ctx context.Context, c fanoutConfig, rc *receipts) (*sockets, error) {
	type table struct {
		id     string
		tokens []string
	}
	tables := make([]table, c.tables)
	err := parallel(ctx, c.tables, c.dialers, func(i int) error {
		owner, _, err := newPlayer(ctx, c.url, fmt.Sprintf("Owner %d", i))
		if err != nil {
			return err
		}
		var tbl struct {
			ID string `json:"id"`
		}
		if err := post(ctx, c.url, "/api/tables", owner, map[string]any{"name": fmt.Sprintf("Fanout %d", i), "seats": c.players}, &tbl); err != nil {
			return err
		}
		tables[i].id = tbl.ID
		for p := range c.players {
			tok, _, err := newPlayer(ctx, c.url, fmt.Sprintf("Fan %d-%d", i, p))
			if err != nil {
				return err
			}
			var seat struct{}
			if err := post(ctx, c.url, "/api/tables/"+tbl.ID+"/seats", tok,
				map[string]any{"character": map[string]any{"name": fmt.Sprintf("Fan%d", p), "class": "warrior"}}, &seat); err != nil {
				return err
			}
			tables[i].tokens = append(tables[i].tokens, tok)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set up tables: %w", err)
	}
	per := c.players + c.spectators
	s := &sockets{conns: make([]*websocket.Conn, c.tables*per), send: make([]func(context.Context, int) error, c.tables)}
	err = parallel(ctx, len(s.conns), c.dialers, func(i int) error {
		t := tables[i/per]
		role, tok := "spectator", ""
		if k := i % per; k < c.players {
			role, tok = "player", t.tokens[k]
		}
		conn, err := dial(ctx, c.url, t.id, role, tok)
		if err != nil {
			return fmt.Errorf("socket %d: %w", i, err)
		}
		s.conns[i] = conn
		drainSocket(conn, rc)
		if i%per == 0 {
			s.send[i/per] = func(ctx context.Context, n int) error {
				b, _ := json.Marshal(map[string]string{"type": "say", "id": fmt.Sprint("fo", n),
					"text": marker + strconv.FormatInt(time.Now().UnixNano(), 10)})
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				return conn.Write(wctx, websocket.MessageText, b)
			}
		}
		return nil
	})
	return s, err
}

func anchorSockets(ctx context.Context, c fanoutConfig, n int, rc *receipts) (*sockets, error) {
	s := &sockets{conns: make([]*websocket.Conn, n)}
	u := strings.Replace(c.url, "http", "ws", 1) + "/subscribe"
	err := parallel(ctx, n, c.dialers, func(i int) error {
		conn, _, err := websocket.Dial(ctx, u, nil)
		if err != nil {
			return fmt.Errorf("socket %d: %w", i, err)
		}
		closeWith(ctx, conn)
		s.conns[i] = conn
		drainSocket(conn, rc)
		return nil
	})
	s.send = []func(context.Context, int) error{func(ctx context.Context, _ int) error {
		body := marker + strconv.FormatInt(time.Now().UnixNano(), 10)
		req, err := http.NewRequestWithContext(ctx, "POST", c.url+"/publish", strings.NewReader(body))
		if err != nil {
			return err
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode/100 != 2 {
			return fmt.Errorf("publish: %s", res.Status)
		}
		return nil
	}}
	return s, err
}
