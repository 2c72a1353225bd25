package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/pgtest"
)

// TestMain doubles as the server: with TAVERN_TEST_CHILD=1 the test binary
// runs run() as main does, so the crash tests signal a real server process
// without building another binary.
func TestMain(m *testing.M) {
	if os.Getenv("TAVERN_TEST_CHILD") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, []string{"-addr", "127.0.0.1:0"}, os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "tavern:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(pgtest.Main(m)) // PostgreSQL for the cluster's chaos test
}

// child is a server process.
type child struct {
	t    testing.TB
	cmd  *exec.Cmd
	url  string
	logs *lockedBuf
	done chan struct{}
	err  error
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startChild starts the server on dbPath with env added (loopback, a free
// port) and waits until it listens.
func startChild(t testing.TB, dbPath string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TAVERN_TEST_CHILD=1", "TAVERN_DB="+dbPath, "TAVERN_QUOTAS=off", "TAVERN_LOG_LEVEL=info")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{t: t, cmd: cmd, logs: &lockedBuf{}, done: make(chan struct{})}
	cmd.Stderr = c.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() { c.kill() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "Tavern is open: http://"); ok {
				addr <- "http://" + strings.SplitN(rest, "/", 2)[0]
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case c.url = <-addr:
	case <-c.done:
		t.Fatalf("server exited: %v\n%s", c.err, c.logs)
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start:\n%s", c.logs)
	}
	return c
}

func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// signal sends sig and waits for the process to end.
func (c *child) signal(sig os.Signal) error {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatal(err)
	}
	select {
	case <-c.done:
		return c.err
	case <-time.After(30 * time.Second):
		c.t.Fatalf("server still running 30 s after %v:\n%s", sig, c.logs)
	}
	return nil
}

// api calls the JSON API; it returns the status and the decoded body.
func (c *child) api(method, path, token string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(res.Body).Decode(&m)
	return res.StatusCode, m
}

// events returns the table's whole event log.
func (c *child) events(tableID string) []map[string]any {
	c.t.Helper()
	var all []map[string]any
	since := 0.0
	for {
		st, m := c.api("GET", fmt.Sprintf("/api/tables/%s/events?since=%d&limit=500", tableID, int64(since)), "", nil)
		if st != http.StatusOK {
			c.t.Fatalf("events: %d %v", st, m)
		}
		evs, _ := m["events"].([]any)
		if len(evs) == 0 {
			return all
		}
		for _, e := range evs {
			ev := e.(map[string]any)
			all = append(all, ev)
			since = ev["seq"].(float64)
		}
	}
}

// dial opens a websocket on the table.
func (c *child) dial(tableID, role, token string) *websocket.Conn {
	c.t.Helper()
	u := strings.Replace(c.url, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=" + role
	if token != "" {
		u += "&token=" + token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		c.t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(1 << 20)
	return conn
}

// readUntil reads frames until pred holds; it fails after 30 s.
func readUntil(t testing.TB, conn *websocket.Conn, pred func(map[string]any) bool) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m map[string]any
		if json.Unmarshal(data, &m) == nil && pred(m) {
			return m
		}
	}
}
