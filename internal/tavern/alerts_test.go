package tavern

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/alert"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// fakeClock is the alert rules' clock in these tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (s *opServer) alerts() []alert.Alert {
	s.t.Helper()
	var out struct {
		Alerts []alert.Alert `json:"alerts"`
	}
	if st := s.call("GET", "/api/admin/alerts", "admin", nil, &out); st != http.StatusOK {
		s.t.Fatalf("alerts: %d", st)
	}
	return out.Alerts
}

func hasAlert(as []alert.Alert, id string) *alert.Alert {
	for i := range as {
		if as[i].ID == id {
			return &as[i]
		}
	}
	return nil
}

// page GETs a console page with the admin token.
func (s *opServer) page(path string) string {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		s.t.Fatalf("%s: %d %.300s", path, res.StatusCode, b)
	}
	return string(b)
}

// TestAlertsRaisedAndCleared: a failing model raises the error-rate
// alert, a player's action left waiting raises the action alert with its
// table; both show in GET /api/admin/alerts and in the banner of every
// console page, and clear when the window passes and the action is
// abandoned; the overview keeps them in its history.
func TestAlertsRaisedAndCleared(t *testing.T) {
	fake := openaitest.New(t, func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: http.StatusInternalServerError, Error: "boom"}
	})
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model = fake.URL, "llama3.1"
	cfg.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 }
	s := startOp(t, cfg)
	clock := &fakeClock{t: time.Now()}
	s.tv.alerts.now = clock.now

	if as := s.alerts(); len(as) != 0 {
		t.Fatalf("alerts before anything: %+v", as)
	}
	ctx := agent.WithTable(context.Background(), "t1")
	for range 5 {
		if _, err := s.tv.runner.Narrative.Complete(ctx, agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}}); err == nil {
			t.Fatal("the failing model answered")
		}
	}
	clock.add(2 * time.Second) // past the rules' one-second reuse
	as := s.alerts()
	a := hasAlert(as, "model_error_rate:llama3.1")
	if a == nil || a.Severity != alert.Critical || !strings.Contains(a.Summary, "5 of 5") {
		t.Fatalf("alerts %+v: want model_error_rate:llama3.1, critical, 5 of 5", as)
	}
	for _, p := range []string{"/admin", "/admin/tables", "/admin/llm", "/admin/spend", "/admin/ask"} {
		if body := s.page(p); !strings.Contains(body, `id="alert-banner"`) || !strings.Contains(body, "model_error_rate:llama3.1") {
			t.Errorf("%s: no alert banner", p)
		}
	}

	// A player's action waits: the model fails every turn.
	_, tok := s.player("Ann")
	var tb map[string]any
	s.call("POST", "/api/tables", tok, map[string]any{"name": "Stuck", "combat_mode": "narrative"}, &tb)
	id := tb["id"].(string)
	s.sit(tok, id, "Bram", "")
	pl := s.dial(id, tok, "player")
	pl.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	pl.await("the ack", func(f map[string]any) bool { return f["type"] == "ack" && f["id"] == "a1" })
	clock.add(11 * time.Minute) // the model window passes too
	as = s.alerts()
	wait := hasAlert(as, "action_waiting:"+id)
	if wait == nil || wait.TableID != id {
		t.Fatalf("alerts %+v: want action_waiting:%s with its table", as, id)
	}
	if hasAlert(as, "model_error_rate:llama3.1") != nil {
		t.Errorf("alerts %+v: the model alert did not clear past its window", as)
	}
	if body := s.page("/admin"); !strings.Contains(body, `id="alert-history"`) || !strings.Contains(body, "model_error_rate:llama3.1") {
		t.Error("the overview has no alert history with the cleared model alert")
	}

	// The operator abandons the actions: the alert clears.
	var v struct {
		Pending []struct {
			ActionID string `json:"action_id"`
		} `json:"pending"`
	}
	var tables struct {
		Tables []struct {
			ID      string `json:"id"`
			Pending []struct {
				ActionID string `json:"action_id"`
			} `json:"pending"`
		} `json:"tables"`
	}
	s.call("GET", "/api/admin/tables", "admin", nil, &tables)
	for _, row := range tables.Tables {
		if row.ID == id {
			v.Pending = row.Pending
		}
	}
	if len(v.Pending) == 0 {
		t.Fatalf("no pending action on %s", id)
	}
	for _, p := range v.Pending { // the arrival turn's and a1
		if st := s.call("POST", "/api/admin/tables/"+id+"/pending/"+p.ActionID+"/abandon", "admin", nil, nil); st != http.StatusNoContent {
			t.Fatalf("abandon: %d", st)
		}
	}
	clock.add(2 * time.Second)
	if as := s.alerts(); hasAlert(as, "action_waiting:"+id) != nil {
		t.Errorf("alerts %+v: the action alert did not clear", as)
	}
	hist := s.tv.alerts.tracker.History(0)
	cleared := 0
	for _, r := range hist {
		if r.Cleared != nil {
			cleared++
		}
	}
	if cleared != 2 {
		t.Errorf("history %+v: want both alerts cleared", hist)
	}
}
