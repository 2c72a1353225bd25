package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/tavern"
	"tavern/web"
)

// testEnv is a running Tavern, built by tavern.New as the binary builds
// it: a real SQLite file, a real hub with the offline narrator, the web
// handler, served on a loopback port.
type testEnv struct {
	t       *testing.T
	url     string
	client  *http.Client
	tavern  *tavern.Tavern
	hub     *hub.Hub
	store   *db.DB
	players *recordingPlayers
}

// recordingPlayers is the real store, remembering the hashes it was given.
type recordingPlayers struct {
	web.Players
	mu     sync.Mutex
	hashes [][]byte
}

func (r *recordingPlayers) CreatePlayer(ctx context.Context, p engine.Player, hash []byte) error {
	r.mu.Lock()
	r.hashes = append(r.hashes, append([]byte(nil), hash...))
	r.mu.Unlock()
	return r.Players.CreatePlayer(ctx, p, hash)
}

type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newTestEnv(t *testing.T) *testEnv { return startEnv(t, envConfig{}) }

// envConfig varies a testEnv; the zero value is newTestEnv's.
type envConfig struct {
	path  string      // the SQLite file (default: a new one)
	model agent.Model // the DM (default: the offline narrator)
	// quotas, unless zero, replaces the quotas the settings make, with
	// exact rates and bursts; Off alone is the quotas setting off.
	quotas web.Quotas
	// calls prices the model's calls (the operator's view of the call
	// log and the metrics) and seeds the dice as those tests expect.
	calls bool
	// web adjusts the web handler's configuration, after the above.
	web func(*web.Config)
}

// startEnv builds and serves a Tavern on cfg's SQLite file; it stops when
// the test ends.
func startEnv(t *testing.T, cfg envConfig) *testEnv {
	t.Helper()
	if cfg.path == "" {
		cfg.path = filepath.Join(t.TempDir(), "t.db")
	}
	players := &recordingPlayers{}
	tc := tavern.DefaultConfig()
	tc.Addr, tc.DB, tc.AdminToken = "127.0.0.1:0", cfg.path, testAdminToken
	tc.LogOutput, tc.LogLevel = tlog{t}, slog.LevelWarn
	tc.ShutdownTimeout = 5 * time.Second
	tc.Narrator = cfg.model
	seed := uint64(7)
	if cfg.calls {
		tc.Prices, seed = "offline=1/0.5/2", 11
	}
	tc.Hub = func(c *hub.Config) {
		c.Seed = func() uint64 { return seed }
		c.ShutdownGrace = 2 * time.Second
	}
	exact := false
	switch q := cfg.quotas; {
	case q.Off:
		tc.Quotas = false // as TAVERN_QUOTAS=off
	case q != web.Quotas{}:
		exact = true
	}
	tc.Web = func(c *web.Config) {
		players.Players, c.Players = c.Players, players
		if exact {
			c.Quotas = cfg.quotas
		}
		if cfg.web != nil {
			cfg.web(c)
		}
	}
	tv, err := tavern.New(context.Background(), tc)
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Listen(); err != nil {
		tv.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- tv.Serve() }()
	client := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		if err := tv.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		client.CloseIdleConnections()
	})
	return &testEnv{t: t, url: tv.URL(), client: client, tavern: tv, hub: tv.Hub, store: tv.Store, players: players}
}

// testAdminToken is the operator's token of every testEnv.
const testAdminToken = "admin-test-token"

// response is a decoded HTTP response.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a generic map.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

// do sends a request. body may be a string (sent as is) or any value
// (sent as JSON); token, if set, goes in a bearer header.
func (e *testEnv) do(method, path string, body any, token string, hdr ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// newPlayer creates a player and returns its id and token.
func (e *testEnv) newPlayer(name string) (id, token string) {
	e.t.Helper()
	r := e.do("POST", "/api/players", map[string]any{"name": name}, "")
	if r.status != http.StatusCreated {
		e.t.Fatalf("create player %s: %d %s", name, r.status, r.body)
	}
	m := r.json(e.t)
	return m["player_id"].(string), m["token"].(string)
}

// newTable creates a table owned by a fresh player and returns its id.
func (e *testEnv) newTable(req map[string]any) string {
	e.t.Helper()
	_, tok := e.newPlayer("Owner")
	r := e.do("POST", "/api/tables", req, tok)
	if r.status != http.StatusCreated {
		e.t.Fatalf("create table: %d %s", r.status, r.body)
	}
	return r.json(e.t)["id"].(string)
}

// wantError checks r is an error response with status and code, in the
// protocol's shape: exactly {"error": {"code", "message"}}.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %s)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var body map[string]map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if len(body) != 1 || body["error"] == nil {
		t.Fatalf("error body = %s, want {\"error\": {...}}", r.body)
	}
	e := body["error"]
	if len(e) != 2 {
		t.Errorf("error object = %v, want exactly code and message", e)
	}
	if e["code"] != code {
		t.Errorf("error code = %v, want %q", e["code"], code)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error message is empty")
	}
}

// slogTo logs everything to w.
func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newHTTPTest serves h until the test ends.
func newHTTPTest(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// arrive waits until the player's character at the table has arrived: its
// session start, queued when it sat, narrated by the DM. Tests that count
// events, or expect the next narration to answer their own action, call it
// before going on.
func (e *testEnv) arrive(tableID, playerID string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := e.hub.StartSession(ctx, tableID, engine.Player{ID: playerID})
	if engine.ErrorCode(err) == engine.ECONFLICT {
		return // arrived already
	}
	if err != nil {
		e.t.Fatal(err)
	}
	evs, err := e.hub.Subscribe(ctx, tableID, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	for ev := range evs {
		if d, ok := ev.Data.(engine.NarrationData); ok && d.ActionID == id {
			return
		}
	}
	e.t.Fatalf("player %s never arrived at %s", playerID, tableID)
}
