package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/db"
	llmtest "tavern/internal/openai/openaitest"
)

func TestNewRunner(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fake := llmtest.New(t, nil)
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	log := slog.New(slog.DiscardHandler)

	r, data, dm, err := newRunner(env(nil), store, store, log)
	if err != nil || dm != "offline" || r.Narrative.Name() != "offline" || r.Memory == nil || data != nil {
		t.Fatalf("offline: %q %v (data model %v, want none: the offline analyst answers)", dm, err, data)
	}

	r, data, dm, err = newRunner(env(map[string]string{"OPENAI_BASE_URL": fake.URL, "TAVERN_MODEL": "llama3.1", "TAVERN_MODEL_SUMMARY": "small",
		"TAVERN_MODEL_DATA": "analyst", "TAVERN_PRICES": "llama3.1=1/0.5/2", "TAVERN_LLM_TIMEOUT": "5s"}), store, store, log)
	if err != nil {
		t.Fatal(err)
	}
	if data == nil || data.Name() != "analyst" {
		t.Errorf("data model %v, want TAVERN_MODEL_DATA's analyst", data)
	}
	if r.Narrative.Name() != "llama3.1" || r.Summary.Name() != "small" || dm == "offline" {
		t.Fatalf("online: %q %s %s", dm, r.Narrative.Name(), r.Summary.Name())
	}
	fake.Push(llmtest.Reply{Content: "hi", Usage: &agent.Usage{PromptTokens: 1_000_000, CachedTokens: 500_000, CompletionTokens: 1_000_000}})
	ctx := agent.WithTable(context.Background(), "t1")
	if _, err := r.Narrative.Complete(ctx, agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	calls, err := store.Calls(ctx, "t1", 10)
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls %+v %v", calls, err)
	}
	if c := calls[0]; c.Model != "llama3.1" || c.Agent != "narrative" || c.CostUSD != 0.5+0.25+2 {
		t.Errorf("call %+v", c)
	}

	for _, bad := range []map[string]string{{"TAVERN_PRICES": "x"}, {"TAVERN_LLM_TIMEOUT": "soon"}, {"TAVERN_LLM_FIRST_TOKEN_TIMEOUT": "-1s"}, {"TAVERN_LLM_IDLE_TIMEOUT": "x"}} {
		if _, _, _, err := newRunner(env(bad), store, store, log); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
