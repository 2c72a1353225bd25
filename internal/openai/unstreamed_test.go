package openai_test

import (
	"context"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// A server that streams text but sends tool calls only without `stream`:
// in auto mode the first call finds it out (asked again, unstreamed) and
// the next calls with tools go unstreamed at once; off never streams.
func TestServerWithoutStreamedToolCalls(t *testing.T) {
	reply := func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{NoStreamTools: true,
			ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "The well is deep."})}}
	}
	req := agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "look"}},
		Tools: []agent.ToolSpec{{Name: "respond", Parameters: map[string]any{"type": "object"}}}}
	for _, tc := range []struct {
		mode string
		want []bool // the requests' stream flags over two calls
	}{
		{openai.StreamAuto, []bool{true, false, false}},
		{openai.StreamOff, []bool{false, false}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			fake := openaitest.New(t, reply)
			m := openai.New(openai.Config{BaseURL: fake.URL, Model: "fake-gm", CallTimeout: time.Minute, Streaming: tc.mode})
			for i := range 2 {
				var narrated string
				r := req
				r.OnDelta = func(s string) { narrated += s }
				resp, err := m.Complete(context.Background(), r)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Name != "respond" {
					t.Errorf("call %d: tool calls %v, want respond", i, resp.Message.ToolCalls)
				}
				if i == 1 && narrated != "The well is deep." {
					t.Errorf("call %d: narrated %q, want the narration whole", i, narrated)
				}
			}
			var got []bool
			for _, r := range fake.Requests() {
				got = append(got, r.Stream)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("stream flags %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("stream flags %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// In auto mode a streamed answer without tool calls is asked again
// unstreamed: both calls are paid for, and when the second fails the
// streamed answer is the result, not a reason to start over.
func TestAutoAskAgain(t *testing.T) {
	req := agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "look"}},
		Tools: []agent.ToolSpec{{Name: "respond", Parameters: map[string]any{"type": "object"}}}}
	streamed := openaitest.Reply{Content: "The door creaks.", Usage: &agent.Usage{PromptTokens: 100, CompletionTokens: 10, CachedTokens: 64}}
	for _, tc := range []struct {
		name      string
		again     openaitest.Reply
		wantUsage agent.Usage
		wantTools int
	}{
		{"second answers", openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "The door creaks."})},
			Usage: &agent.Usage{PromptTokens: 100, CompletionTokens: 20}},
			agent.Usage{PromptTokens: 200, CompletionTokens: 30, CachedTokens: 64}, 1},
		{"second fails", openaitest.Reply{Status: 500, Error: "boom"},
			agent.Usage{PromptTokens: 100, CompletionTokens: 10, CachedTokens: 64}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaitest.New(t, nil)
			fake.Push(streamed, tc.again)
			m := openai.New(openai.Config{BaseURL: fake.URL, Model: "fake-gm", CallTimeout: time.Minute, Streaming: openai.StreamAuto,
				Backoff: func(int) time.Duration { return 0 }})
			resp, err := m.Complete(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != tc.wantUsage {
				t.Errorf("usage %+v, want %+v", resp.Usage, tc.wantUsage)
			}
			if len(resp.Message.ToolCalls) != tc.wantTools {
				t.Errorf("tool calls %v, want %d", resp.Message.ToolCalls, tc.wantTools)
			}
			if tc.wantTools == 0 && resp.Message.Content != "The door creaks." {
				t.Errorf("content %q, want the streamed answer", resp.Message.Content)
			}
			if n := len(fake.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
		})
	}
}
