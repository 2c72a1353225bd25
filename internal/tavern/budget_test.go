package tavern

import (
	"net/http"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/offline"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// TestBudgetGoesOffline: a table whose model calls (priced from the fake
// server's token usage) reach its daily budget goes on with the offline
// narrator, says so once with a `system` event `budget`, and calls the
// model no more; the console shows its spend.
func TestBudgetGoesOffline(t *testing.T) {
	play := openaitest.FromModel(offline.Narrator{})
	fake := openaitest.New(t, func(r openaitest.Request) openaitest.Reply {
		rep := play(r)
		rep.Usage = &agent.Usage{PromptTokens: 1_000_000} // $1 a call at the price below
		return rep
	})
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model, cfg.Prices = fake.URL, "llama3.1", "llama3.1=1/1/1"
	cfg.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 }
	s := startOp(t, cfg)

	_, tok := s.player("Ann")
	var tb map[string]any
	if st := s.call("POST", "/api/tables", tok, map[string]any{"name": "Budgeted", "combat_mode": "narrative"}, &tb); st != http.StatusCreated {
		t.Fatalf("new table: %d %v", st, tb)
	}
	id := tb["id"].(string)
	var set map[string]any
	if st := s.call("PUT", "/api/admin/tables/"+id+"/budget", "admin", map[string]any{"usd_per_day": 0.5}, &set); st != http.StatusOK || set["usd_per_day"] != 0.5 {
		t.Fatalf("set budget: %d %v", st, set)
	}
	for _, bad := range []any{-1, 2_000_000, nil} {
		if st := s.call("PUT", "/api/admin/tables/"+id+"/budget", "admin", map[string]any{"usd_per_day": bad}, nil); st != http.StatusBadRequest {
			t.Errorf("a budget of %v: %d, want 400", bad, st)
		}
	}
	if st := s.call("PUT", "/api/admin/tables/nope/budget", "admin", map[string]any{"usd_per_day": 1}, nil); st != http.StatusNotFound {
		t.Errorf("budget of no table: %d, want 404", st)
	}
	if st := s.call("PUT", "/api/admin/tables/"+id+"/budget", tok, map[string]any{"usd_per_day": 9}, nil); st != http.StatusUnauthorized {
		t.Errorf("a player's token sets a budget: %d, want 401", st)
	}

	ws := s.dial(id, "", "spectator").joined()
	s.sit(tok, id, "Bram", "")
	// The arrival turn is the model's: it spends $1 or more, past the
	// budget of $0.50.
	ws.await("the arrival narration", event("narration", nil))
	calls := len(fake.Requests())
	if calls == 0 {
		t.Fatal("the model played no turn before the budget was spent")
	}
	pl := s.dial(id, tok, "player")
	pl.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	notice := ws.await("the budget notice", event("system", func(f map[string]any) bool {
		d, _ := f["data"].(map[string]any)
		return d["code"] == agent.SystemBudget
	}))
	ws.await("the offline narration", event("narration", nil))
	pl.send(map[string]any{"type": "act", "id": "a2", "text": "go to the inn"})
	next := ws.await("the next narration", event("narration", nil))
	if n := len(fake.Requests()); n != calls {
		t.Errorf("the model got %d more calls over budget, want none", n-calls)
	}
	// Told once: no second notice between the two narrations.
	if next["seq"].(float64) <= notice["seq"].(float64) {
		t.Errorf("narration seq %v before the notice %v", next["seq"], notice["seq"])
	}

	var b struct {
		TodayUSD float64 `json:"today_usd"`
		Tables   []struct {
			TableID   string  `json:"table_id"`
			USDPerDay float64 `json:"usd_per_day"`
			TodayUSD  float64 `json:"today_usd"`
			Over      bool    `json:"over"`
		} `json:"tables"`
	}
	if st := s.call("GET", "/api/admin/budgets", "admin", nil, &b); st != http.StatusOK {
		t.Fatalf("budgets: %d", st)
	}
	found := false
	for _, row := range b.Tables {
		if row.TableID == id {
			found = true
			if !row.Over || row.USDPerDay != 0.5 || row.TodayUSD < float64(calls) {
				t.Errorf("table row %+v, want over, budget 0.5, spent ≥ %d", row, calls)
			}
		}
	}
	if !found || b.TodayUSD < float64(calls) {
		t.Errorf("budgets %+v: no row for %s or today's spend under %d", b, id, calls)
	}
	if code, body := get(t, s.srv.URL+"/admin/spend"); code != http.StatusUnauthorized || body == "" {
		t.Errorf("spend page without the token: %d", code)
	}
}

// TestServerBudget: TAVERN_BUDGET_DAY_USD over every table: once spent, a
// table's budget check says so for any table.
func TestServerBudget(t *testing.T) {
	b := &agent.Budget{DayUSD: 2}
	b.Add("t1", 1.5, timeNow())
	if st := b.Check("t2"); st.Over {
		t.Fatalf("under the server's budget: %+v", st)
	}
	b.Add("t1", 0.5, timeNow())
	st := b.Check("t2")
	if !st.Over || !st.Notice {
		t.Fatalf("at the server's budget: %+v, want over and told", st)
	}
	b.Told("t2", true)
	if st := b.Check("t2"); !st.Over || st.Notice {
		t.Errorf("second check %+v: want over, told once", st)
	}
}
