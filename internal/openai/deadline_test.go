package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
)

// A request that hangs is abandoned by the first-token or the idle
// deadline, long before CallTimeout, and retried. The
// hung replies hang for an hour: only the deadlines can end them.
func TestStreamDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name string
		hang openaitest.Reply
		want string
	}{
		{"nothing before the first chunk", openaitest.Reply{Delay: time.Hour, Content: "never"}, "no first chunk in time"},
		{"stops mid-stream", openaitest.Reply{Content: "The door creaks open and", ChunkSize: 4, StallAfter: 3}, "stream stalled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := openai.Config{
				APIKey: "sk-test", Model: "fake-gm", CallTimeout: time.Hour, MaxAttempts: 2,
				FirstTokenTimeout: 200 * time.Millisecond, IdleTimeout: 200 * time.Millisecond,
				Backoff: func(int) time.Duration { return time.Millisecond },
			}
			t.Run("retried", func(t *testing.T) {
				fake := openaitest.New(t, nil)
				fake.Push(tc.hang, openaitest.Reply{Content: "The hall is quiet."})
				cfg := cfg
				cfg.BaseURL = fake.URL
				var deltas []string
				resp, err := openai.New(cfg).Complete(context.Background(), agent.Request{Agent: "narrative",
					Messages: []agent.Message{{Role: "user", Content: "look"}}, OnDelta: func(s string) { deltas = append(deltas, s) }})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Message.Content != "The hall is quiet." {
					t.Errorf("content %q", resp.Message.Content)
				}
				if n := len(fake.Requests()); n != 2 {
					t.Errorf("%d requests, want the hung one and its retry", n)
				}
			})
			t.Run("given up", func(t *testing.T) {
				fake := openaitest.New(t, nil)
				fake.Push(tc.hang)
				cfg := cfg
				cfg.BaseURL, cfg.MaxAttempts = fake.URL, 1
				_, err := openai.New(cfg).Complete(context.Background(), agent.Request{Agent: "narrative",
					Messages: []agent.Message{{Role: "user", Content: "look"}}})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err %v, want %q", err, tc.want)
				}
				if errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err %v is the call's timeout, not the stream deadline", err)
				}
			})
		})
	}
}
