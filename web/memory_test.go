package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
	"tavern/web"
)

func TestMemoryAndExportEndpoints(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, owner := e.newPlayer("Owner")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Memories"}, owner)
	if r.status != http.StatusCreated {
		t.Fatalf("create table: %d %s", r.status, r.body)
	}
	tid := r.json(t)["id"].(string)
	_, other := e.newPlayer("Other")

	// Three turns of history, the first two archived into a memory.
	for turn := 1; turn <= 3; turn++ {
		user, _ := json.Marshal(agent.Message{Role: "user", Content: fmt.Sprintf("Turn %d. Aldric (seat 1) acts.\n<context>\n{}\n</context>\n<player_words>\nI ask Maren about the lantern\n</player_words>", turn)})
		call, _ := json.Marshal(agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: fmt.Sprintf("c%d", turn), Type: "function",
			Function: agent.FunctionCall{Name: "respond", Arguments: `{"narration":"Maren polishes a mug. \"The Lantern? Snikket took it.\""}`}}}})
		res, _ := json.Marshal(agent.Message{Role: "tool", ToolCallID: fmt.Sprintf("c%d", turn), Content: "ok"})
		if err := e.store.Commit(ctx, store.Commit{TableID: tid, Messages: []store.AgentMessage{
			{Agent: engine.AgentNarrative, Turn: turn, Body: user}, {Agent: engine.AgentNarrative, Turn: turn, Body: call}, {Agent: engine.AgentNarrative, Turn: turn, Body: res}}}); err != nil {
			t.Fatal(err)
		}
	}
	_, msgs, _ := e.store.MemorySession(ctx, tid, 1) // none yet
	if len(msgs) != 0 {
		t.Fatal("memory before archive")
	}
	rows, _ := e.store.ActiveHistory(ctx, tid, engine.AgentNarrative, 0)
	var block []agent.Message
	for _, row := range rows[:6] {
		var m agent.Message
		_ = json.Unmarshal(row.Body, &m)
		m.Turn = row.Turn
		block = append(block, m)
	}
	mem := agent.Summarize(ctx, nil, engine.AgentNarrative, block, nil)
	mem.TableID = tid
	mem, err := e.store.ArchiveHistory(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.LogCall(ctx, store.LLMCall{TableID: tid, Agent: "narrative", Model: "gpt-4o-mini", Started: time.Now(), LatencyMS: 900, PromptTokens: 2000, CachedTokens: 1024, CompletionTokens: 50, CostUSD: 0.0003}); err != nil {
		t.Fatal(err)
	}
	base := "/api/tables/" + tid

	t.Run("list", func(t *testing.T) {
		r := e.do("GET", base+"/memories", nil, owner)
		var got web.MemoriesResponse
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || len(got.Memories) != 1 || got.Memories[0].ID != mem.ID {
			t.Fatalf("%d %s", r.status, r.body)
		}
		m := got.Memories[0]
		if m.Source != "extractive" || m.FirstTurn != 1 || m.LastTurn != 2 || m.Messages != 6 || !strings.Contains(strings.Join(m.Keywords, " "), "maren") {
			t.Errorf("memory %+v", m)
		}
	})
	t.Run("search", func(t *testing.T) {
		r := e.do("GET", base+"/memories/search?q=snikket+lantern", nil, owner)
		var got web.MemoriesResponse
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || len(got.Memories) != 1 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		r = e.do("GET", base+"/memories/search?q=dragon", nil, owner)
		if r.status != http.StatusOK || strings.TrimSpace(string(r.body)) != `{"memories":[]}` {
			t.Fatalf("%d %s", r.status, r.body)
		}
		wantError(t, e.do("GET", base+"/memories/search", nil, owner), http.StatusBadRequest, "bad_request")
	})
	t.Run("session", func(t *testing.T) {
		r := e.do("GET", fmt.Sprintf("%s/memories/%d", base, mem.ID), nil, owner)
		var got hub.Session
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if len(got.Messages) != 6 || !strings.Contains(got.Transcript, "I ask Maren about the lantern") || strings.Contains(got.Transcript, "<context>") {
			t.Errorf("session %+v", got)
		}
		wantError(t, e.do("GET", base+"/memories/999", nil, owner), http.StatusNotFound, "not_found")
		wantError(t, e.do("GET", base+"/memories/x", nil, owner), http.StatusNotFound, "not_found")
	})
	t.Run("summarize", func(t *testing.T) {
		r := e.do("POST", fmt.Sprintf("%s/memories/%d/summarize", base, mem.ID), nil, owner)
		var got store.Memory
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || got.ID != mem.ID || got.Summary == "" || got.Source != "extractive" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("export", func(t *testing.T) {
		r := e.do("GET", base+"/export/history_narrative.jsonl", nil, owner)
		if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/jsonl") ||
			!strings.Contains(r.header.Get("Content-Disposition"), "history_narrative.jsonl") {
			t.Fatalf("%d %v %s", r.status, r.header, r.body)
		}
		lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
		if len(lines) != 9 {
			t.Fatalf("%d lines, want 9 (archived included)", len(lines))
		}
		var msgs []agent.Message
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil || m["role"] == nil {
				t.Fatalf("line %q: %v", l, err)
			}
			var am agent.Message
			_ = json.Unmarshal([]byte(l), &am)
			msgs = append(msgs, am)
		}
		if ok, why := agent.Valid(msgs); !ok {
			t.Errorf("export: %s", why)
		}
		r = e.do("GET", base+"/export/history_combat.jsonl", nil, owner)
		if r.status != http.StatusOK || len(r.body) != 0 {
			t.Errorf("empty combat export: %d %q", r.status, r.body)
		}
		wantError(t, e.do("GET", base+"/export/history_secrets.jsonl", nil, owner), http.StatusNotFound, "not_found")
	})
	t.Run("calls", func(t *testing.T) {
		r := e.do("GET", base+"/calls", nil, owner)
		var got web.CallsResponse
		if r.status != http.StatusOK || json.Unmarshal(r.body, &got) != nil || len(got.Calls) != 1 || got.Calls[0].CachedTokens != 1024 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("owner only", func(t *testing.T) {
		for _, p := range []string{"/memories", "/memories/search?q=x", fmt.Sprintf("/memories/%d", mem.ID), "/export/history_narrative.jsonl", "/calls"} {
			wantError(t, e.do("GET", base+p, nil, other), http.StatusForbidden, "forbidden")
			wantError(t, e.do("GET", base+p, nil, ""), http.StatusUnauthorized, "unauthorized")
		}
		wantError(t, e.do("POST", fmt.Sprintf("%s/memories/%d/summarize", base, mem.ID), nil, other), http.StatusForbidden, "forbidden")
		wantError(t, e.do("GET", "/api/tables/nope/memories", nil, owner), http.StatusNotFound, "not_found")
	})
}
