package tavern

import (
	"net/http"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// dataHistory is GET /api/admin/agents/data/history as the test reads it.
type dataHistory struct {
	Agent         string `json:"agent"`
	Conversations []struct {
		Conversation string `json:"conversation"`
		Questions    int    `json:"questions"`
		Turns        []struct {
			Turn     int      `json:"turn"`
			Question string   `json:"question"`
			Answer   string   `json:"answer"`
			SQL      []string `json:"sql"`
			Calls    []struct {
				Model string `json:"model"`
				Agent string `json:"agent"`
				Turn  string `json:"turn"`
				Error string `json:"error"`
			} `json:"calls"`
		} `json:"turns"`
	} `json:"conversations"`
}

// TestDataAgentHistory: the data agent's conversations are browsable
// like the table agents' histories, after a restart too: each question
// with its SQL, its answer and its model calls (the failed one of a
// question the offline analyst answered instead), on the API, on its
// page, linked from a table's session browser, and exported as
// history_data.jsonl.
func TestDataAgentHistory(t *testing.T) {
	fake := openaitest.New(t, nil)
	cfg := testConfig(t)
	cfg.OpenAIBaseURL, cfg.Model = fake.URL, "fake-analyst"
	cfg.OpenAI = func(c *openai.Config) { c.MaxAttempts = 1 }
	s := startOp(t, cfg)

	const sql = "SELECT count(*) AS tables FROM v_tables"
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("query_data", map[string]any{"sql": sql, "description": "Count the tables"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("answer", map[string]any{"text": "There are no tables yet."})}},
		openaitest.Reply{Status: http.StatusInternalServerError, Error: "boom"},
	)
	var first, second struct {
		Conversation string `json:"conversation"`
		Offline      bool   `json:"offline"`
	}
	if st := s.call("POST", "/api/admin/ask", "admin", map[string]string{"question": "How many tables are there?"}, &first); st != http.StatusOK {
		t.Fatalf("ask: %d", st)
	}
	if st := s.call("POST", "/api/admin/ask", "admin", map[string]string{"question": "who is online now?"}, &second); st != http.StatusOK || !second.Offline {
		t.Fatalf("ask with a failing model: %d %+v, want the offline analyst's answer", st, second)
	}
	// The call log is written off the model path: a restart flushes it,
	// and the history is read back from the store.
	s.srv.Close()
	if err := s.tv.Close(); err != nil {
		t.Fatal(err)
	}
	s = startOp(t, cfg)

	var h dataHistory
	if st := s.call("GET", "/api/admin/agents/data/history", "admin", nil, &h); st != http.StatusOK || h.Agent != agent.AgentData || len(h.Conversations) != 2 {
		t.Fatalf("data history: %d %+v", st, h)
	}
	off, on := h.Conversations[0], h.Conversations[1]
	if on.Conversation != first.Conversation || off.Conversation != second.Conversation {
		t.Fatalf("conversations %s, %s: want the newest (%s) first", off.Conversation, on.Conversation, second.Conversation)
	}
	q := on.Turns[0]
	if len(on.Turns) != 1 || q.Question != "How many tables are there?" || len(q.SQL) != 1 || q.SQL[0] != sql || q.Answer != "There are no tables yet." {
		t.Errorf("the model's question %+v", q)
	}
	if len(q.Calls) != 2 || q.Calls[0].Model != "fake-analyst" || q.Calls[0].Agent != agent.AgentData || q.Calls[0].Turn != agent.AskTurn(on.Conversation, 1) {
		t.Errorf("the model's question's calls %+v: want its 2 calls", q.Calls)
	}
	oq := off.Turns[0]
	if len(off.Turns) != 1 || oq.Question != "who is online now?" || !strings.Contains(oq.Answer, "connected right now") {
		t.Errorf("the offline question %+v", oq)
	}
	if len(oq.Calls) != 1 || oq.Calls[0].Error == "" {
		t.Errorf("the offline question's calls %+v: want the one failed call", oq.Calls)
	}
	if st := s.call("GET", "/api/admin/agents/data/history?limit=1", "admin", nil, &h); st != http.StatusOK || len(h.Conversations) != 1 {
		t.Errorf("limit 1: %d, %d conversations", st, len(h.Conversations))
	}
	if st := s.call("GET", "/api/admin/agents/data/history?limit=0", "admin", nil, nil); st != http.StatusBadRequest {
		t.Errorf("limit 0: %d, want 400", st)
	}

	page := s.page("/admin/agents/data")
	for _, want := range []string{`id="data-agent-history"`, `id="` + on.Conversation + `"`, "How many tables are there?", sql, "There are no tables yet.", "fake-analyst", "who is online now?"} {
		if !strings.Contains(page, want) {
			t.Errorf("the data agent's page lacks %q", want)
		}
	}
	if llm := s.page("/admin/llm"); !strings.Contains(llm, `href="/admin/agents/data#`+off.Conversation+`"`) {
		t.Error("the LLM page's failed data agent call does not link to its conversation")
	}
	_, tok := s.player("Ann")
	var tb map[string]any
	s.call("POST", "/api/tables", tok, map[string]any{"name": "Quiet"}, &tb)
	if body := s.page("/admin/tables/" + tb["id"].(string)); !strings.Contains(body, `href="/admin/agents/data" id="data-agent-link"`) {
		t.Error("the table's session browser has no link to the data agent")
	}

	export := s.page("/api/admin/ask/" + on.Conversation + "/export/history_data.jsonl")
	lines := strings.Split(strings.TrimSpace(export), "\n")
	if len(lines) < 4 || !strings.Contains(lines[0], `"role":"user"`) || !strings.Contains(lines[0], "How many tables are there?") ||
		!strings.Contains(export, "query_data") {
		t.Errorf("export %q: want the question, the query and the answer, a message a line", export)
	}
	if st := s.call("GET", "/api/admin/ask/"+on.Conversation+"/export/history_narrative.jsonl", "admin", nil, nil); st != http.StatusNotFound {
		t.Errorf("another file: %d, want 404", st)
	}
	if st := s.call("GET", "/api/admin/ask/q-nope/export/history_data.jsonl", "admin", nil, nil); st != http.StatusNotFound {
		t.Errorf("no such conversation: %d, want 404", st)
	}
}
