package tavern

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/offline"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
	"tavern/internal/pgtest"
)

// pricedNodes starts two nodes on one database whose model is the fake
// server's, at $1 a call, with the server's daily budget dayUSD.
func pricedNodes(t *testing.T, dayUSD float64) (a, b *opServer, fake *openaitest.Server) {
	t.Helper()
	play := openaitest.FromModel(offline.Narrator{})
	fake = openaitest.New(t, func(r openaitest.Request) openaitest.Reply {
		rep := play(r)
		rep.Usage = &agent.Usage{PromptTokens: 1_000_000}
		return rep
	})
	url := pgtest.URL(t)
	start := func() *opServer {
		tv := node(t, url, func(c *Config) {
			c.LeaseRenew, c.LeaseTTL, c.AdminToken = 50*time.Millisecond, time.Hour, "admin"
			c.OpenAIBaseURL, c.Model, c.Prices, c.BudgetDayUSD = fake.URL, "llama3.1", "llama3.1=1/1/1", dayUSD
			c.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 }
		})
		return &opServer{t: t, tv: tv, srv: &httptest.Server{URL: tv.URL()}}
	}
	return start(), start(), fake
}

type budgetsView struct {
	TodayUSD float64 `json:"today_usd"`
	Tables   []struct {
		TableID   string  `json:"table_id"`
		USDPerDay float64 `json:"usd_per_day"`
		TodayUSD  float64 `json:"today_usd"`
	} `json:"tables"`
}

// until asks s's budgets until ok accepts them (a hang fails after a long
// safety bound, not a timing assertion).
func (s *opServer) budgetsUntil(what string, ok func(budgetsView) bool) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var b budgetsView
		if st := s.call("GET", "/api/admin/budgets", "admin", nil, &b); st == http.StatusOK && ok(b) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: budgets %+v", what, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func budgetNotice(f map[string]any) bool {
	d, _ := f["data"].(map[string]any)
	return d["code"] == agent.SystemBudget
}

// TestDayBudgetAcrossNodes: the server's daily budget counts what every
// node spent: once one node's table spent it, a table on the other node
// is played offline, and its model is not called.
func TestDayBudgetAcrossNodes(t *testing.T) {
	a, b, fake := pricedNodes(t, 1)
	_, tok := a.player("Ann")
	var tb map[string]any
	a.call("POST", "/api/tables", tok, map[string]any{"name": "Spender", "combat_mode": "narrative"}, &tb)
	ws := a.dial(tb["id"].(string), "", "spectator").joined()
	a.sit(tok, tb["id"].(string), "Bram", "")
	ws.await("the arrival narration", event("narration", nil))
	if len(fake.Requests()) == 0 {
		t.Fatal("the model played no turn")
	}
	b.budgetsUntil("the other node's spend", func(v budgetsView) bool { return v.TodayUSD >= 1 })

	calls := len(fake.Requests())
	_, tok2 := b.player("Bob")
	b.call("POST", "/api/tables", tok2, map[string]any{"name": "Thrifty", "combat_mode": "narrative"}, &tb)
	ws2 := b.dial(tb["id"].(string), "", "spectator")
	b.sit(tok2, tb["id"].(string), "Cora", "")
	ws2.await("the budget notice on the other node", event("system", budgetNotice))
	ws2.await("the offline narration", event("narration", nil))
	if n := len(fake.Requests()); n != calls {
		t.Errorf("the other node called the model %d times over the day's budget, want none", n-calls)
	}
}

// TestTableBudgetAcrossNodes: a table's budget set through one node holds
// on the node that runs the table: its spend there reaches the budget and
// the table goes offline; every node's console shows the budget and the
// spend.
func TestTableBudgetAcrossNodes(t *testing.T) {
	a, b, fake := pricedNodes(t, 0)
	_, tok := b.player("Ann")
	var tb map[string]any
	b.call("POST", "/api/tables", tok, map[string]any{"name": "Budgeted", "combat_mode": "narrative"}, &tb)
	id := tb["id"].(string)
	if st := a.call("PUT", "/api/admin/tables/"+id+"/budget", "admin", map[string]any{"usd_per_day": 0.5}, nil); st != http.StatusOK {
		t.Fatalf("set the budget through the other node: %d", st)
	}
	row := func(v budgetsView, f func(usd, spent float64) bool) bool {
		for _, r := range v.Tables {
			if r.TableID == id {
				return f(r.USDPerDay, r.TodayUSD)
			}
		}
		return false
	}
	b.budgetsUntil("the budget on the running node", func(v budgetsView) bool {
		return row(v, func(usd, _ float64) bool { return usd == 0.5 })
	})
	ws := b.dial(id, "", "spectator").joined()
	b.sit(tok, id, "Bram", "")
	ws.await("the arrival narration", event("narration", nil))
	calls := len(fake.Requests())
	pl := b.dial(id, tok, "player")
	pl.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	ws.await("the budget notice", event("system", budgetNotice))
	ws.await("the offline narration", event("narration", nil))
	if n := len(fake.Requests()); n != calls {
		t.Errorf("the model got %d more calls over the table's budget, want none", n-calls)
	}
	a.budgetsUntil("the spend on the node that set the budget", func(v budgetsView) bool {
		return row(v, func(usd, spent float64) bool { return usd == 0.5 && spent >= 1 })
	})
}
