package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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

// batchLog is a CallBatchLog that records the batches it is given, holds
// the first until release is closed, and fails those of failing calls.
type batchLog struct {
	release chan struct{}
	mu      sync.Mutex
	batches [][]store.LLMCall
}

func (b *batchLog) LogCall(context.Context, store.LLMCall) error {
	return errors.New("LogCall used on a batch log")
}

func (b *batchLog) LogCalls(_ context.Context, calls []store.LLMCall) error {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	b.batches = append(b.batches, calls)
	for _, c := range calls {
		if c.Error == "fail" {
			return errors.New("disk full")
		}
	}
	return nil
}

// TestCallWriterBatches: with a store that takes batches, what queued while
// a write was under way is written in one batch; a failed batch counts each
// of its calls as dropped, as a full queue does; every call handed over is
// observed.
func TestCallWriterBatches(t *testing.T) {
	b := &batchLog{release: make(chan struct{})}
	var mu sync.Mutex
	dropped, observed := 0, 0
	w := NewCallWriter(CallWriterConfig{Store: b, Queue: 8,
		Observe: func(store.LLMCall) { mu.Lock(); observed++; mu.Unlock() },
		Dropped: func() { mu.Lock(); dropped++; mu.Unlock() }})
	refused := 0
	for i := range 11 {
		if err := w.LogCall(context.Background(), store.LLMCall{Agent: fmt.Sprint(i)}); errors.Is(err, ErrCallDropped) {
			refused++
		}
	}
	close(b.release)
	sent := 12
	for errors.Is(w.LogCall(context.Background(), store.LLMCall{Error: "fail"}), ErrCallDropped) {
		refused++ // the queue is still full: counted as dropped too
		sent++
		runtime.Gosched()
	}
	_ = w.Close()
	mu.Lock()
	defer mu.Unlock()
	written := 0
	for _, batch := range b.batches {
		written += len(batch)
	}
	if written != sent-refused {
		t.Errorf("%d calls handed to the store, want %d", written, sent-refused)
	}
	if len(b.batches) > 3 {
		t.Errorf("%d batches for %d calls queued behind a stuck write, want at most 3", len(b.batches), written)
	}
	last := b.batches[len(b.batches)-1]
	failed := 0
	if last[len(last)-1].Error == "fail" {
		failed = len(last)
	}
	if dropped != refused+failed || observed != written {
		t.Errorf("dropped %d (refused %d, in a failed batch %d), observed %d of %d", dropped, refused, failed, observed, written)
	}
}
