package openai_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
	"tavern/internal/store"
)

// An error the server sends inside a stream (HTTP 200, then an `error`
// chunk) is sorted and retried by its kind, as the same failure answered
// with an HTTP status would be: a rate limit is a rate limit.
func TestErrorInsideTheStream(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   openaitest.StreamError
		kind  string
		retry bool
	}{
		{"rate limit", openaitest.StreamError{Message: "Rate limit reached for requests", Type: "requests", Code: "rate_limit_exceeded"}, store.CallRateLimit, true},
		{"numeric code", openaitest.StreamError{Message: "slow down", Code: 429}, store.CallRateLimit, true},
		{"quota", openaitest.StreamError{Message: "You exceeded your current quota", Type: "insufficient_quota"}, store.CallRateLimit, true},
		{"server error", openaitest.StreamError{Message: "The server had an error while processing your request", Type: "server_error"}, store.CallServer, true},
		{"overloaded", openaitest.StreamError{Message: "Overloaded", Type: "overloaded_error"}, store.CallServer, true},
		{"bad key", openaitest.StreamError{Message: "Incorrect API key provided", Type: "invalid_request_error", Code: "invalid_api_key"}, store.CallAuth, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaitest.New(t, nil)
			e := tc.err
			broken := openaitest.Reply{Content: "The door creaks open and", ChunkSize: 4, StreamError: &e, ErrorAfter: 3}
			fake.Push(broken)
			m := openai.New(openai.Config{APIKey: "sk-test", BaseURL: fake.URL, Model: "fake-gm", CallTimeout: time.Minute,
				MaxAttempts: 1, Backoff: func(int) time.Duration { return time.Millisecond }})
			_, err := m.Complete(context.Background(), agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "look"}}})
			var se *openai.StreamError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want an *openai.StreamError", err)
			}
			if got := agent.ErrorKind(err); got != tc.kind {
				t.Errorf("ErrorKind(%v) = %s, want %s", err, got, tc.kind)
			}
			// With a second attempt allowed: retried only if its kind is.
			m = openai.New(openai.Config{APIKey: "sk-test", BaseURL: fake.URL, Model: "fake-gm", CallTimeout: time.Minute,
				MaxAttempts: 2, Backoff: func(int) time.Duration { return time.Millisecond }})
			fake.Push(broken, openaitest.Reply{Content: "The hall is quiet."})
			resp, err := m.Complete(context.Background(), agent.Request{Agent: "narrative", Messages: []agent.Message{{Role: "user", Content: "look"}}})
			if tc.retry && (err != nil || resp.Message.Content != "The hall is quiet.") {
				t.Errorf("retried: %q, %v; want the second attempt's answer", resp.Message.Content, err)
			}
			if !tc.retry && err == nil {
				t.Errorf("a %s error was retried", tc.kind)
			}
		})
	}
}
