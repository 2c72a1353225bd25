package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
	"tavern/internal/store"
)

// newFakeModel is the OpenAI adapter pointed at a fake server.
func newFakeModel(t *testing.T, fake *openaitest.Server) *openai.Model {
	t.Helper()
	return openai.New(openai.Config{
		APIKey: "sk-test", BaseURL: fake.URL, Model: "fake-gm",
		CallTimeout: 2 * time.Second, MaxAttempts: 3,
		Backoff: func(int) time.Duration { return time.Millisecond },
	})
}

func block() []agent.Message {
	return []agent.Message{
		{Role: "user", Turn: 4, Content: "Turn 4. Aldric (seat 1) acts.\n<context>\n{\"secret\":\"x\"}\n</context>\nThe player's words follow.\n<player_words>\nI ask Maren about the Lantern\n</player_words>"},
		{Role: "assistant", Turn: 4, ToolCalls: []agent.ToolCall{call("c1", "get_npc_info")}},
		{Role: "tool", Turn: 4, ToolCallID: "c1", Content: "{}"},
		{Role: "assistant", Turn: 4, ToolCalls: []agent.ToolCall{{ID: "c2", Type: "function", Function: agent.FunctionCall{Name: "respond",
			Arguments: `{"narration":"Maren lowers her voice. Snikket the goblin took the Lantern to the mill."}`}}}},
		{Role: "tool", Turn: 4, ToolCallID: "c2", Content: "ok"},
		{Role: "user", Turn: 5, Content: "Turn 5. Aldric (seat 1) acts.\n<player_words>\nWe go to the mill\n</player_words>"},
		{Role: "assistant", Turn: 5, ToolCalls: []agent.ToolCall{{ID: "c3", Type: "function", Function: agent.FunctionCall{Name: "respond",
			Arguments: `{"narration":"The river path is slick with rain; smoke rises from the mill."}`}}}},
		{Role: "tool", Turn: 5, ToolCallID: "c3", Content: "ok"},
	}
}

func TestSummarizeExtractive(t *testing.T) {
	for _, model := range []agent.Model{nil, offline.Narrator{}} {
		m := agent.Summarize(context.Background(), model, "narrative", block(), nil)
		if m.Source != "extractive" || m.FirstTurn != 4 || m.LastTurn != 5 || m.Messages != 8 {
			t.Fatalf("memory %+v", m)
		}
		if !strings.Contains(m.Title, "I ask Maren about the Lantern") {
			t.Errorf("title %q", m.Title)
		}
		if m.Summary != "Maren lowers her voice. The river path is slick with rain; smoke rises from the mill." {
			t.Errorf("summary %q", m.Summary)
		}
		kw := strings.Join(m.Keywords, ",")
		for _, want := range []string{"maren", "lantern", "mill"} {
			if !strings.Contains(kw, want) {
				t.Errorf("keywords %s lack %s", kw, want)
			}
		}
		if strings.Contains(kw, "secret") {
			t.Errorf("keywords %s come from a state block", kw)
		}
	}
}

func TestSummarizeWithModel(t *testing.T) {
	fake := openaitest.New(t, nil)
	fake.Push(openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("save_memory", map[string]any{
		"title": "The Lantern's trail", "summary": "Maren names Snikket as the thief; the party heads to the mill.",
		"keywords": []string{"Maren", "Snikket", "Lantern", "mill", "Maren"}})}})
	m := agent.Summarize(context.Background(), newFakeModel(t, fake), "narrative", block(), nil)
	if m.Source != "fake-gm" || m.Title != "The Lantern's trail" || strings.Join(m.Keywords, ",") != "Maren,Snikket,Lantern,mill" {
		t.Fatalf("memory %+v", m)
	}
	r := fake.Requests()[0]
	if r.ToolNames()[0] != "save_memory" || strings.Contains(r.Messages[0].Content, "<context>") || !strings.Contains(r.Messages[0].Content, "I ask Maren about the Lantern") {
		t.Errorf("summary request %+v", r.Messages)
	}

	// A model that fails or answers badly gives an extractive memory.
	for _, reply := range []openaitest.Reply{{Status: 400}, {Content: "Here is a summary."}, {ToolCalls: []agent.ToolCall{openaitest.Call("save_memory", `{"title":""}`)}}} {
		fake.Push(reply)
		m := agent.Summarize(context.Background(), newFakeModel(t, fake), "narrative", block(), nil)
		if m.Source != "extractive" || m.Summary == "" {
			t.Errorf("after %+v: %+v", reply, m)
		}
	}
}

func TestPrices(t *testing.T) {
	p, err := agent.ParsePrices("gpt-x=1/0.5/2; local=0/0/0")
	if err != nil {
		t.Fatal(err)
	}
	got := p.Cost("gpt-x", agent.Usage{PromptTokens: 1_000_000, CachedTokens: 400_000, CompletionTokens: 500_000})
	if want := 0.6 + 0.2 + 1.0; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	if c := p.Cost("unknown", agent.Usage{PromptTokens: 10}); c != 0 {
		t.Errorf("unknown model costs %v", c)
	}
	for _, bad := range []string{"x", "x=1/2", "x=a/1/2", "=1/1/1", "x=-1/0/0"} {
		if _, err := agent.ParsePrices(bad); err == nil {
			t.Errorf("ParsePrices(%q) accepted", bad)
		}
	}
}

// fakeIndex is a hand-written MemoryIndex.
type fakeIndex struct{}

func (fakeIndex) SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error) {
	if tableID != "t1" || !strings.Contains(strings.ToLower(query), "snikket") {
		return nil, nil
	}
	return []store.Memory{{ID: 7, FirstTurn: 4, LastTurn: 5, Title: "The Lantern's trail", Summary: "Snikket took it.", Keywords: []string{"Snikket"}}}, nil
}

func (fakeIndex) MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error) {
	if tableID != "t1" || id != 7 {
		return store.Memory{}, nil, errNotFound
	}
	var rows []store.AgentMessage
	for _, m := range block() {
		b, _ := json.Marshal(m)
		rows = append(rows, store.AgentMessage{Agent: engine.AgentNarrative, Turn: m.Turn, Body: b})
	}
	return store.Memory{ID: 7, FirstTurn: 4, LastTurn: 5, Title: "The Lantern's trail"}, rows, nil
}

var errNotFound = engine.Errorf(engine.ENOTFOUND, "no such session")

func TestMemoryTools(t *testing.T) {
	st, d, actor := loneHero(t)
	fake := openaitest.New(t, nil)
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("search_memories", map[string]any{"query": "Snikket"}), openaitest.Call("search_memories", map[string]any{"query": "dragons"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("recall_session_details", map[string]any{"session_id": 7}), openaitest.Call("recall_session_details", map[string]any{"session_id": 99})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "You remember Maren's words."})}},
	)
	m := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: m, Combat: m, Memory: fakeIndex{}}
	res, err := r.Run(agent.WithTable(context.Background(), "t1"), &agent.Turn{No: 9, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Text: "What did Maren tell us?"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output.Narration != "You remember Maren's words." {
		t.Fatalf("output %+v", res.Output)
	}
	results := map[string]string{}
	for _, msg := range res.Messages {
		if msg.Turn != 9 {
			t.Errorf("message without its turn: %+v", msg)
		}
		if msg.Role == "tool" {
			results[msg.ToolCallID] = msg.Content
		}
	}
	reqs := fake.Requests()
	ids := func(n int) []string {
		var out []string
		for _, c := range reqs[n].Messages[len(reqs[n].Messages)-3].ToolCalls {
			out = append(out, c.ID)
		}
		return out
	}
	search, recall := ids(1), ids(2)
	if got := results[search[0]]; !strings.Contains(got, `"session_id":7`) || !strings.Contains(got, "The Lantern's trail") {
		t.Errorf("search result %s", got)
	}
	if got := results[search[1]]; got != "No memory matches dragons." {
		t.Errorf("empty search result %s", got)
	}
	if got := results[recall[0]]; !strings.Contains(got, "I ask Maren about the Lantern") || !strings.Contains(got, "Snikket the goblin took the Lantern") || strings.Contains(got, "<context>") {
		t.Errorf("recall result %s", got)
	}
	if got := results[recall[1]]; !strings.HasPrefix(got, "Error: There is no session 99") {
		t.Errorf("recall of a missing session: %s", got)
	}
}
