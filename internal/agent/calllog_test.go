package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"tavern/internal/store"
)

// blockingLog holds every write until release is closed.
type blockingLog struct {
	release chan struct{}
	mu      sync.Mutex
	got     []store.LLMCall
}

func (b *blockingLog) LogCall(_ context.Context, c store.LLMCall) error {
	<-b.release
	b.mu.Lock()
	b.got = append(b.got, c)
	b.mu.Unlock()
	return nil
}

// TestCallWriterNeverBlocks: with the store stuck, LogCall still returns at
// once; what the bounded queue cannot hold is dropped and counted; Close
// writes what was queued and observes each call.
func TestCallWriterNeverBlocks(t *testing.T) {
	b := &blockingLog{release: make(chan struct{})}
	var mu sync.Mutex
	dropped, observed := 0, 0
	w := NewCallWriter(CallWriterConfig{Store: b, Queue: 2,
		Observe: func(store.LLMCall) { mu.Lock(); observed++; mu.Unlock() },
		Dropped: func() { mu.Lock(); dropped++; mu.Unlock() }})
	errs := 0
	for i := range 10 {
		if err := w.LogCall(context.Background(), store.LLMCall{Agent: fmt.Sprint(i)}); errors.Is(err, ErrCallDropped) {
			errs++
		}
	}
	// One call may be held by the writer, two queued: the rest dropped.
	if errs < 7 || errs > 8 {
		t.Errorf("%d calls dropped, want 7 or 8", errs)
	}
	close(b.release)
	_ = w.Close()
	_ = w.Close() // twice is fine
	mu.Lock()
	if len(b.got) != 10-errs || observed != len(b.got) || dropped != errs {
		t.Errorf("written %d, observed %d, dropped %d (refused %d)", len(b.got), observed, dropped, errs)
	}
	mu.Unlock()
	if err := w.LogCall(context.Background(), store.LLMCall{}); !errors.Is(err, ErrCallDropped) {
		t.Errorf("LogCall after Close = %v", err)
	}
}

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{context.DeadlineExceeded, store.CallTimeout},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), store.CallTimeout},
		{errors.New(`POST "https://api.openai.com/v1/chat/completions": 429 Too Many Requests`), store.CallRateLimit},
		{errors.New(`POST "https://x/v1/chat/completions": 502 Bad Gateway`), store.CallServer},
		{errors.New("decode response: invalid character '<' looking for beginning of value"), store.CallInvalidOutput},
		{errors.New("connection refused"), store.CallOther},
	} {
		if got := ErrorKind(tc.err); got != tc.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
