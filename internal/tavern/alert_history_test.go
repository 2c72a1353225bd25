package tavern

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/alert"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// TestAlertHistoryOutlivesRestart: an alert raised by a failing model is
// in the store; a Tavern restarted on the same file shows it on the
// overview, and its first run of the rules clears it (the new process
// has seen no failing call), which the store keeps too.
func TestAlertHistoryOutlivesRestart(t *testing.T) {
	fake := openaitest.New(t, func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: http.StatusInternalServerError, Error: "boom"}
	})
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model = fake.URL, "llama3.1"
	cfg.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 }
	cfg.AlertEvery = time.Hour // only the requests run the rules
	s := startOp(t, cfg)
	ctx := agent.WithTable(context.Background(), "t1")
	for range 5 {
		if _, err := s.tv.runner.Narrative.Complete(ctx, agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}}); err == nil {
			t.Fatal("the failing model answered")
		}
	}
	const id = "model_error_rate:llama3.1"
	a := hasAlert(s.alerts(), id)
	if a == nil || a.Rule != alert.RuleModelErrors || a.Value != 1 || a.Threshold != cfg.AlertModelErrorRate {
		t.Fatalf("alert %+v: want %s with value 1 and threshold %v", a, id, cfg.AlertModelErrorRate)
	}
	s.srv.Close()
	if err := s.tv.Close(); err != nil {
		t.Fatal(err)
	}

	s = startOp(t, cfg)
	body := s.page("/admin")
	if i := strings.Index(body, `id="alert-history"`); i < 0 || !strings.Contains(body[i:], id) {
		t.Fatalf("the overview after a restart has no alert history with %s", id)
	}
	if as := s.alerts(); hasAlert(as, id) != nil {
		t.Errorf("alerts %+v: %s still fires with no failing call since the restart", as, id)
	}
	rows, err := s.tv.DB.AlertHistory(context.Background(), 0)
	if err != nil || len(rows) != 1 || rows[0].AlertID != id || rows[0].ClearedAt == nil || !rows[0].RaisedAt.Equal(a.Since) {
		t.Fatalf("stored history %+v %v: want %s raised at %v and cleared", rows, err, id, a.Since)
	}
	if h := s.tv.alerts.tracker.History(0); len(h) != 1 || h[0].Cleared == nil {
		t.Errorf("history %+v: want the one alert, cleared", h)
	}
}
