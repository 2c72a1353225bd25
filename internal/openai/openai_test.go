package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"tavern/internal/agent"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

func newFakeModel(t *testing.T, fake *openaitest.Server) *openai.Model {
	t.Helper()
	return openai.New(openai.Config{
		APIKey: "sk-test", BaseURL: fake.URL, Model: "fake-gm",
		CallTimeout: 2 * time.Second, MaxAttempts: 3,
		Backoff: func(int) time.Duration { return time.Millisecond },
	})
}

func TestOpenAIStreamsToolCallsAndUsage(t *testing.T) {
	fake := openaitest.New(t, nil)
	narration := "Snikket \"the Quick\" bares his teeth — 🐺\nRun!"
	fake.Push(openaitest.Reply{
		Content:   "Thinking. ",
		ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"hints": []string{"flee"}, "narration": narration})},
		Usage:     &agent.Usage{PromptTokens: 2048, CompletionTokens: 40, CachedTokens: 1920},
		ChunkSize: 3,
	})
	m := newFakeModel(t, fake)
	var deltas []string
	resp, err := m.Complete(context.Background(), agent.Request{
		Agent: "narrative", System: "You are the GM.",
		Messages: []agent.Message{
			{Role: "user", Content: "look"},
			{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "c1", Type: "function", Function: agent.FunctionCall{Name: "look", Arguments: "{}"}}}},
			{Role: "tool", ToolCallID: "c1", Content: "a square"},
		},
		Tools:   []agent.ToolSpec{{Name: "respond", Description: "end", Parameters: map[string]any{"type": "object"}}},
		OnDelta: func(s string) { deltas = append(deltas, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deltas, ""); got != "Thinking. "+narration {
		t.Errorf("deltas %q", got)
	}
	if len(deltas) < 5 {
		t.Errorf("narration came in %d deltas, want it streamed", len(deltas))
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Name != "respond" || resp.Message.ToolCalls[0].ID == "" {
		t.Fatalf("tool calls %+v", resp.Message.ToolCalls)
	}
	if resp.Usage != (agent.Usage{PromptTokens: 2048, CompletionTokens: 40, CachedTokens: 1920}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if !r.Stream || !r.IncludeUsage || r.Model != "fake-gm" || r.System != "You are the GM." || r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %+v", r)
	}
	if len(r.Messages) != 3 || r.Messages[1].ToolCalls[0].ID != "c1" || r.Messages[2].ToolCallID != "c1" {
		t.Errorf("messages %+v", r.Messages)
	}
	if names := r.ToolNames(); len(names) != 1 || names[0] != "respond" {
		t.Errorf("tools %v", names)
	}
}

func TestOpenAIRetries(t *testing.T) {
	ok := openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", `{"narration":"ok"}`)}}
	cases := []struct {
		name     string
		replies  []openaitest.Reply
		requests int
		status   int // of the final error, 0 = success
		// timeout is the attempt deadline: long, so a loaded machine's
		// slow answer is not taken for a hang, except where a hang is the case.
		timeout time.Duration
	}{
		{"429 then success", []openaitest.Reply{{Status: 429, RetryAfter: "0"}, ok}, 2, 0, 0},
		{"timeout then success", []openaitest.Reply{{Delay: time.Minute}, ok}, 2, 0, time.Second},
		{"503 twice then success", []openaitest.Reply{{Status: 503}, {Status: 502}, ok}, 3, 0, 0},
		{"500 forever", []openaitest.Reply{{Status: 500}, {Status: 500}, {Status: 500}, ok}, 3, 500, 0},
		{"400 is not retried", []openaitest.Reply{{Status: 400, Error: "bad tools"}, ok}, 1, 400, 0},
		{"401 is not retried", []openaitest.Reply{{Status: 401}, ok}, 1, 401, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.timeout == 0 {
				c.timeout = 10 * time.Second
			}
			fake := openaitest.New(t, nil)
			fake.Push(c.replies...)
			m := openai.New(openai.Config{BaseURL: fake.URL, Model: "fake", CallTimeout: c.timeout,
				MaxAttempts: 3, Backoff: func(int) time.Duration { return time.Millisecond }})
			resp, err := m.Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}})
			if n := len(fake.Requests()); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
			if c.status == 0 {
				if err != nil || len(resp.Message.ToolCalls) != 1 {
					t.Fatalf("resp %+v err %v", resp, err)
				}
				return
			}
			var apiErr *sdk.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != c.status {
				t.Fatalf("err %v, want an *openai.Error with status %d", err, c.status)
			}
		})
	}
}

func TestOpenAIHonoursContext(t *testing.T) {
	fake := openaitest.New(t, nil)
	fake.Push(openaitest.Reply{Delay: time.Minute})
	m := newFakeModel(t, fake)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(fake.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := m.Complete(ctx, agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("%d requests after cancel, want 1", n)
	}
}

// A stream that breaks after some narration is retried without streaming
// the narration a second time.
func TestOpenAIRetryDoesNotRepeatDeltas(t *testing.T) {
	fake := openaitest.New(t, nil)
	long := strings.Repeat("The rain falls on Greyhollow. ", 40)
	// The first answer hangs after 20 deltas (the role chunk, then 19 of
	// text) until the call times out; the retry succeeds.
	// The retry streams in a few large chunks, so that a loaded machine
	// does not time it out too.
	retry := respond(long)
	retry.ChunkSize = 512
	fake.Push(openaitest.Reply{Content: long, ChunkSize: 4, StallAfter: 20}, retry)
	m := openai.New(openai.Config{BaseURL: fake.URL, Model: "fake", CallTimeout: time.Second,
		MaxAttempts: 2, Backoff: func(int) time.Duration { return time.Millisecond }})
	var got strings.Builder
	resp, err := m.Complete(context.Background(), agent.Request{Messages: []agent.Message{{Role: "user", Content: "hi"}},
		OnDelta: func(s string) { got.WriteString(s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || len(fake.Requests()) != 2 {
		t.Fatalf("resp %+v after %d requests", resp, len(fake.Requests()))
	}
	if want := long[:19*4]; got.String() != want {
		t.Errorf("deltas %q, want only the first attempt's %q", got.String(), want)
	}
}

func respond(narration string) openaitest.Reply {
	return openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": narration})}}
}
