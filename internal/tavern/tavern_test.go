package tavern

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/offline"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
	"tavern/web"
)

type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// testConfig is the defaults on a new SQLite file, on a free port.
func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Addr, cfg.DB, cfg.LogOutput = "127.0.0.1:0", filepath.Join(t.TempDir(), "t.db"), tlog{t}
	return cfg
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestServe: a Tavern serves the lobby and says it is ready, and Close
// stops Serve and can be called again.
func TestServe(t *testing.T) {
	tv, err := New(context.Background(), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- tv.Serve() }()
	if code, body := get(t, tv.URL()+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz: %d %s", code, body)
	}
	if code, body := get(t, tv.URL()+"/"); code != http.StatusOK || !strings.Contains(body, "Tavern") {
		t.Errorf("lobby: %d %.200s", code, body)
	}
	// It answered, so it serves: a second Serve refuses.
	if err := tv.Serve(); err == nil {
		t.Error("a second Serve served")
	}
	if tv.DM != "offline" || !tv.AdminTokenMade || len(tv.AdminToken) < 20 {
		t.Errorf("DM %q, admin token %q made %v", tv.DM, tv.AdminToken, tv.AdminTokenMade)
	}
	if err := tv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve after Close: %v", err)
	}
	if err := tv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := tv.Serve(); err != nil {
		t.Errorf("Serve after Close: %v, want nil at once", err)
	}
	if err := tv.Listen(); err == nil {
		t.Error("Listen after Close listened")
	}
}

// TestCloseUnserved: a Tavern that never served closes its listener, hub
// and store.
func TestCloseUnserved(t *testing.T) {
	cfg := testConfig(t)
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := tv.Addr()
	if err := tv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("still listening after Close")
	}
	if err := tv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// Closed, the file can be opened again, with nothing left to migrate.
	d, err := db.Open(context.Background(), cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
}

func TestModels(t *testing.T) {
	cases := []struct {
		name                       string
		env                        []string
		dm, narrative, combat, sum string
		data                       string // the data agent's model; "": the offline analyst
	}{
		{"offline", nil, "offline", "offline", "offline", "offline", ""},
		{"key", []string{"OPENAI_API_KEY", "k"}, openai.DefaultModel, openai.DefaultModel, openai.DefaultModel, openai.DefaultModel, openai.DefaultModel},
		{"local server", []string{"OPENAI_BASE_URL", "http://127.0.0.1:11434/v1", "TAVERN_MODEL", "llama3.1"}, "llama3.1 @ 127.0.0.1:11434", "llama3.1", "llama3.1", "llama3.1", "llama3.1"},
		{"per agent", []string{"OPENAI_API_KEY", "k", "TAVERN_MODEL", "m", "TAVERN_MODEL_COMBAT", "c", "TAVERN_MODEL_SUMMARY", "s", "TAVERN_MODEL_DATA", "d"}, "m, combat: c", "m", "c", "s", "d"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse(envOf(c.env...))
			if err != nil {
				t.Fatal(err)
			}
			tv := &Tavern{Config: cfg, Log: discard()}
			r, data, dm := tv.agents()
			if dm != c.dm || r.Narrative.Name() != c.narrative || r.Combat.Name() != c.combat || r.Summary.Name() != c.sum {
				t.Errorf("got %q %q %q %q", dm, r.Narrative.Name(), r.Combat.Name(), r.Summary.Name())
			}
			if (data == nil) != (c.data == "") || data != nil && data.Name() != c.data {
				t.Errorf("data model %v, want %q", data, c.data)
			}
		})
	}
}

// TestCallLog: a model's calls reach the store's call log, priced by the
// defaults and the Prices setting.
func TestCallLog(t *testing.T) {
	fake := openaitest.New(t, nil)
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model, cfg.Prices = fake.URL, "llama3.1", "llama3.1=1/0.5/2"
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tv.Close()
	if tv.runner.Memory == nil {
		t.Error("no memory tools")
	}
	fake.Push(openaitest.Reply{Content: "hi", Usage: &agent.Usage{PromptTokens: 1_000_000, CachedTokens: 500_000, CompletionTokens: 1_000_000}})
	ctx := agent.WithTable(context.Background(), "t1")
	if _, err := tv.runner.Narrative.Complete(ctx, agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	// Close writes the call log out before the store closes.
	if err := tv.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(ctx, cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	calls, err := d.Calls(ctx, "t1", 10)
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls %+v %v", calls, err)
	}
	if c := calls[0]; c.Model != "llama3.1" || c.Agent != "narrative" || c.CostUSD != 0.5+0.25+2 {
		t.Errorf("call %+v", c)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fakeDM is a test's stand-in for the offline narrator.
type fakeDM struct{ offline.Narrator }

// TestHooks: the Narrator setting plays the DM in place of the offline
// narrator, through the call log; Web adjusts the handler's configuration
// (here, a quota of one player).
func TestHooks(t *testing.T) {
	cfg := testConfig(t)
	dm := &fakeDM{}
	cfg.Narrator = dm
	cfg.Web = func(c *web.Config) { c.Quotas = web.Quotas{PlayersPerMinute: 1, PlayersBurst: 1} }
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tv.Close()
	for name, m := range map[string]agent.Model{"narrative": tv.runner.Narrative, "combat": tv.runner.Combat, "summary": tv.runner.Summary} {
		if l, ok := m.(*agent.Logged); !ok || l.Model != agent.Model(dm) {
			t.Errorf("%s agent %#v, want the Narrator setting's model, logged", name, m)
		}
	}
	srv := httptest.NewServer(tv.Handler)
	defer srv.Close()
	var codes []int
	for range 2 {
		res, err := http.Post(srv.URL+"/api/players", "application/json", strings.NewReader(`{"name": "Ann"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		codes = append(codes, res.StatusCode)
	}
	if codes[0] != http.StatusCreated || codes[1] != http.StatusTooManyRequests {
		t.Errorf("two new players: %v, want 201 then 429 (the Web hook's quota)", codes)
	}
}

// TestModelHealth: a model server answering 500 and 429 shows in the
// operator's overview as failing, with the last error's kind and the
// error rate, while /readyz stays 200: a model that does not answer is
// not the node's fault, and every node would share it.
func TestModelHealth(t *testing.T) {
	fake := openaitest.New(t, nil)
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model, cfg.AdminToken = fake.URL, "llama3.1", "admin"
	cfg.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 } // one call, one answer
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tv.Close()
	srv := httptest.NewServer(tv.Handler)
	defer srv.Close()

	overview := func() []agent.ModelHealth {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/api/admin/overview", nil)
		req.Header.Set("Authorization", "Bearer admin")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var o struct {
			Models []agent.ModelHealth `json:"models"`
		}
		if err := json.NewDecoder(res.Body).Decode(&o); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("overview: %d %v", res.StatusCode, err)
		}
		return o.Models
	}
	if ms := overview(); len(ms) != 1 || ms[0].Model != "llama3.1" || ms[0].State != agent.ModelUnknown || ms[0].Calls5m != 0 {
		t.Errorf("before any call: %+v, want llama3.1 unknown", ms)
	}

	fake.Push(openaitest.Reply{Content: "hi"}, openaitest.Reply{Status: http.StatusInternalServerError, Error: "boom"},
		openaitest.Reply{Status: http.StatusTooManyRequests, Error: "slow down"})
	ctx := agent.WithTable(context.Background(), "t1")
	for i := range 3 {
		_, err := tv.runner.Narrative.Complete(ctx, agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}})
		if (err != nil) != (i > 0) {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	ms := overview()
	if len(ms) != 1 {
		t.Fatalf("models %+v", ms)
	}
	m := ms[0]
	if m.State != agent.ModelFailing || m.LastErrorKind != "rate_limit" || m.Calls5m != 3 || m.Errors5m != 2 || m.ErrorRate5m < 0.66 || m.ErrorRate5m > 0.67 {
		t.Errorf("after ok, 500, 429: %+v, want failing, rate_limit, 2 errors of 3 calls", m)
	}
	if m.LastSuccessAt == nil || m.LastErrorAt == nil || !strings.Contains(m.LastError, "429") {
		t.Errorf("last success %v, last error %v %q", m.LastSuccessAt, m.LastErrorAt, m.LastError)
	}
	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz with a failing model: %d %s, want 200", code, body)
	}
}

// TestHeadersTooLarge: a request with header fields over
// web.MaxHeaderBytes is answered 431 with the protocol's JSON error body,
// not net/http's plain text; one just under passes.
func TestHeadersTooLarge(t *testing.T) {
	tv, err := New(context.Background(), testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = tv.Serve() }()
	t.Cleanup(func() { _ = tv.Close() })
	for _, tc := range []struct {
		name   string
		pad    int
		status int
	}{
		{"under the limit", web.MaxHeaderBytes - 1024, http.StatusOK},
		{"over the limit", web.MaxHeaderBytes + 1, http.StatusRequestHeaderFieldsTooLarge},
		{"far over the limit", web.ServerMaxHeaderBytes - 8<<10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", tv.URL()+"/readyz", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("X-Pad", strings.Repeat("a", tc.pad))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %.200s", res.StatusCode, tc.status, b)
			}
			if tc.status == http.StatusOK {
				return
			}
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want JSON", ct)
			}
			if err := json.Unmarshal(b, &body); err != nil || body.Error.Code != "too_large" || body.Error.Message == "" {
				t.Errorf("body %.200s (%v), want the error body with code too_large", b, err)
			}
		})
	}
}
