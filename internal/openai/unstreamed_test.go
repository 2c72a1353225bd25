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
