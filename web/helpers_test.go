package web

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

	"github.com/prometheus/client_golang/prometheus"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// testEnv is a running Tavern web server on a real SQLite file and a real
// hub with the offline narrator.
type testEnv struct {
	t       *testing.T
	srv     *httptest.Server
	hub     *hub.Hub
	store   *db.DB
	players *recordingPlayers
}

// recordingPlayers is the real store, remembering the hashes it was given.
type recordingPlayers struct {
	Players
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
	path   string      // the SQLite file (default: a new one)
	model  agent.Model // the DM (default: the offline narrator)
	quotas Quotas
	// calls sends the model calls through a call log writer into the
	// store and the metrics, on one registry (the operator's view).
	calls bool
}

// startEnv starts a hub and a web server on cfg's SQLite file; both stop
// when the test ends.
func startEnv(t *testing.T, cfg envConfig) *testEnv {
	t.Helper()
	ctx := context.Background()
	if cfg.path == "" {
		cfg.path = filepath.Join(t.TempDir(), "t.db")
	}
	if cfg.model == nil {
		cfg.model = offline.Narrator{}
	}
	store, err := db.Open(ctx, cfg.path)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := prometheus.NewRegistry()
	hc := hub.Config{
		Store: store, Adventures: lib, DefaultAdventure: adventures.Default, Catalogue: lib.Catalogue,
		Runner: &agent.Runner{Narrative: cfg.model, Combat: cfg.model, Log: log},
		Log:    log, Seed: func() uint64 { return 7 }, ShutdownGrace: 2 * time.Second,
	}
	closeCalls := func() error { return nil }
	if cfg.calls {
		m := hub.NewMetrics(reg)
		store.ObserveWrites(db.WriteObserver{Commit: m.StoreCommit, Transaction: m.StoreTransaction})
		m.StoreQueue(store.Queued)
		calls := agent.NewCallWriter(agent.CallWriterConfig{Store: store, Observe: m.ObserveCall, Dropped: m.CallDropped, Log: log})
		logged := &agent.Logged{Model: cfg.model, Log: calls, Logger: log, Prices: agent.Prices{"offline": {Input: 1, Cached: 0.5, Output: 2}}}
		hc.Runner.Narrative, hc.Runner.Combat, hc.Metrics, hc.Seed = logged, logged, m, func() uint64 { return 11 }
		closeCalls = calls.Close
	}
	h := hub.New(hc)
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	players := &recordingPlayers{Players: store}
	s := New(Config{Hub: h, Players: players, Log: log, Metrics: reg, AdminToken: testAdminToken, Quotas: cfg.quotas})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		_ = h.Close()
		_ = closeCalls()
		srv.Close()
		_ = store.Close()
	})
	return &testEnv{t: t, srv: srv, hub: h, store: store, players: players}
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
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
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
	res, err := e.srv.Client().Do(req)
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
