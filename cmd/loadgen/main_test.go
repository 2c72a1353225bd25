package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestSmallLoadRunsClean(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-tables", "2", "-players", "2", "-spectators", "1", "-actions", "4", "-timeout", "60s"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "16 actions") || !strings.Contains(out.String(), "failures: 0") {
		t.Errorf("report:\n%s", out.String())
	}
	// The in-process server's own count of its acks: one per action, and
	// one per act of a bot done with its own that the fight still waits for.
	if !regexp.MustCompile(`server-side acks \(tavern_ack_seconds: act read → ack queued\), whole run: (1[6-9]|[2-9]\d) acks`).MatchString(out.String()) {
		t.Errorf("no server-side acks:\n%s", out.String())
	}
}

// Batched messages (-batch, as the table page asks) are split into their
// frames: the bots see their acks and narrations and count every event.
func TestBatchedLoadRunsClean(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-tables", "2", "-players", "2", "-spectators", "1", "-actions", "4", "-batch", "-timeout", "60s"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "16 actions") || !strings.Contains(out.String(), "failures: 0") || strings.Contains(out.String(), "events delivered to clients: 0 ") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestThinkTimePacesThePlayers(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"-tables", "1", "-players", "2", "-spectators", "1", "-actions", "3", "-think", "200ms", "-warmup", "300ms", "-timeout", "60s"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "6 actions") || !strings.Contains(out.String(), "think 200ms") || !strings.Contains(out.String(), "failures: 0") {
		t.Errorf("report:\n%s", out.String())
	}
	// The actions after the warm-up are reported apart: the third of each
	// player comes after two pauses of at least 150 ms.
	if !regexp.MustCompile(`of the [1-6] actions sent 300ms or more after the start`).MatchString(out.String()) {
		t.Errorf("no line for the actions past -warmup:\n%s", out.String())
	}
	// The server also acks the strikes of a bot done with its own actions
	// while its fight goes on, so there may be more acks than actions.
	if !regexp.MustCompile(`of those after -warmup: [1-9]\d* acks`).MatchString(out.String()) {
		t.Errorf("no server-side line for the acks past -warmup:\n%s", out.String())
	}
	// Three pauses of at least 150 ms each per player.
	if d := time.Since(start); d < 450*time.Millisecond {
		t.Errorf("the run took %s, less than its players' pauses", d)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for u, ok := range map[string]bool{"http://127.0.0.1:8080": true, "http://localhost:1": true, "http://[::1]:2": true,
		"http://10.0.0.5:8080": false, "http://example.com": false, "http://192.168.1.2": false} {
		if err := loopbackOnly(u); (err == nil) != ok {
			t.Errorf("loopbackOnly(%s) = %v", u, err)
		}
	}
	if err := run(context.Background(), []string{"-url", "http://10.1.2.3:80"}, &bytes.Buffer{}); err == nil {
		t.Error("a non-loopback target must be refused")
	}
}

func TestFanoutAgainstTavern(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-mode", "fanout", "-fanout-tables", "3", "-fanout-players", "2",
		"-fanout-spectators", "3", "-duration", "2s", "-drain", "30s", "-timeout", "60s"}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	// 3 tables × 2 sends × 5 sockets.
	for _, want := range []string{"15 sockets open", "6 sends (0 failed)", "30 frames delivered", "100.00% of 30", "per delivered frame"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFanoutAgainstAnchor runs the anchor mode against a stand-in for the
// chat example: POST /publish sends the body to every /subscribe socket.
func TestFanoutAgainstAnchor(t *testing.T) {
	const sockets = 10
	var mu sync.Mutex
	var subs []*websocket.Conn
	// A client's dial returns when the handshake is written, before the
	// handler below registers the socket: publishing waits for all of them
	// so that a frame is never sent before its subscriber is listed.
	all := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/subscribe", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		mu.Lock()
		subs = append(subs, c)
		if len(subs) == sockets {
			close(all)
		}
		mu.Unlock()
		c.CloseRead(context.Background())
	})
	mux.HandleFunc("POST /publish", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		select {
		case <-all:
		case <-r.Context().Done():
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range subs {
			_ = c.Write(r.Context(), websocket.MessageText, b)
		}
		w.WriteHeader(http.StatusAccepted)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	var out bytes.Buffer
	err := run(context.Background(), []string{"-url", srv.URL, "-mode", "fanout", "-target", "anchor", "-fanout-tables", "2",
		"-fanout-players", "1", "-fanout-spectators", "4", "-duration", "2s", "-drain", "30s", "-server-pid", strconv.Itoa(os.Getpid())}, &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"10 sockets open", "2 sends (0 failed)", "20 frames delivered", "100.00% of 20", "per delivered frame", "KiB per socket", "load average"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMeters(t *testing.T) {
	u, err := procMeter{os.Getpid()}.read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if u.rss <= 0 || u.peakRSS < u.rss {
		t.Errorf("own usage %+v", u)
	}
	// The nodes of a cluster: their usage summed (here this process twice).
	pids, err := parsePIDs(fmt.Sprintf("%d, %d", os.Getpid(), os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	two, err := newMeter("", pids, nil).read(context.Background())
	if err != nil || two.rss < 2*u.rss*9/10 || two.cpu < 2*u.cpu {
		t.Errorf("two processes' usage %+v, one's %+v, %v", two, u, err)
	}
	for _, bad := range []string{"x", "12,-3", "0"} {
		if _, err := parsePIDs(bad); err == nil {
			t.Errorf("-server-pid %q taken", bad)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer adm" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "# HELP process_cpu_seconds_total x\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 12.5\nprocess_resident_memory_bytes 1.048576e+06\ngo_goroutines 7\n")
	}))
	defer srv.Close()
	m := newMeter(srv.URL, nil, scraped(srv.URL, "adm"))
	if u, err := m.read(context.Background()); err != nil || u.cpu != 12.5 || u.rss != 1<<20 {
		t.Errorf("metrics usage %+v, %v", u, err)
	}
	if _, err := newMeter(srv.URL, nil, scraped(srv.URL, "")).read(context.Background()); err == nil {
		t.Error("a 401 from /metrics must be an error")
	}
	if newMeter(srv.URL, nil, nil) != nil {
		t.Error("no pid, no -metrics: no meter")
	}
}
