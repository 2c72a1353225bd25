package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

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
		{errors.New(`POST "https://x/v1/chat/completions": 401 Unauthorized`), store.CallAuth},
		{errors.New(`POST "https://x/v1/chat/completions": 403 Forbidden`), store.CallAuth},
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

// queueLog is a CallQueue that records the batches queued and answers
// them only when told.
type queueLog struct {
	batchLog
	mu      sync.Mutex
	pending []func(error)
	queued  [][]store.LLMCall
}

func (q *queueLog) QueueCalls(_ context.Context, calls []store.LLMCall, done func(error)) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queued = append(q.queued, calls)
	q.pending = append(q.pending, done)
	return nil
}

// answer answers every batch queued so far, failing those with a call
// whose Error is "fail".
func (q *queueLog) answer() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, done := range q.pending {
		var err error
		for _, c := range q.queued[i] {
			if c.Error == "fail" {
				err = errors.New("disk full")
			}
		}
		if done != nil {
			done(err)
			q.pending[i] = nil
		}
	}
}

// TestCallWriterQueues: with a store that queues batches, the writer hands
// over the next batch while the last is still unanswered (a busy store
// costs the call log no round trip per batch); a call is observed only
// once the store answered, a failed batch counts as dropped, and Close
// waits for every answer.
func TestCallWriterQueues(t *testing.T) {
	q := &queueLog{}
	var mu sync.Mutex
	dropped, observed := 0, 0
	w := NewCallWriter(CallWriterConfig{Store: q, Queue: 4,
		Observe: func(store.LLMCall) { mu.Lock(); observed++; mu.Unlock() },
		Dropped: func() { mu.Lock(); dropped++; mu.Unlock() }})
	handed := func() (batches, calls int) {
		q.mu.Lock()
		defer q.mu.Unlock()
		for _, b := range q.queued {
			calls += len(b)
		}
		return len(q.queued), calls
	}
	for i, errText := range []string{"", "", "fail", ""} {
		if err := w.LogCall(context.Background(), store.LLMCall{Agent: fmt.Sprint(i), Error: errText}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		// Each call is handed over although no batch was answered.
		for _, c := handed(); c <= i; _, c = handed() {
			runtime.Gosched()
		}
	}
	mu.Lock()
	if observed != 0 {
		t.Errorf("%d calls observed before the store answered", observed)
	}
	mu.Unlock()
	closed := make(chan struct{})
	go func() { _ = w.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned before the store answered the queued batches")
	case <-time.After(50 * time.Millisecond):
	}
	q.answer()
	<-closed
	_, calls := handed()
	mu.Lock()
	defer mu.Unlock()
	failed := 0
	for _, b := range q.queued {
		for _, c := range b {
			if c.Error == "fail" {
				failed += len(b)
			}
		}
	}
	if calls != 4 || observed != 4 || dropped != failed || failed == 0 {
		t.Errorf("handed %d, observed %d, dropped %d (in failed batches %d)", calls, observed, dropped, failed)
	}
}

// answerModel answers every call at once with a tool call.
type answerModel struct{}

func (answerModel) Name() string { return "gpt-4o-mini" }
func (answerModel) Complete(context.Context, Request) (Response, error) {
	return Response{Message: Message{Role: "assistant"}, Usage: Usage{PromptTokens: 900, CompletionTokens: 40}}, nil
}

// discardLog stores nothing.
type discardLog struct{}

func (discardLog) LogCall(context.Context, store.LLMCall) error    { return nil }
func (discardLog) LogCalls(context.Context, []store.LLMCall) error { return nil }

// BenchmarkLogged is the call record's cost on the turn job: a model call
// through Logged into the CallWriter the server uses.
func BenchmarkLogged(b *testing.B) {
	w := NewCallWriter(CallWriterConfig{Store: discardLog{}, Queue: 1 << 16})
	defer w.Close()
	l := &Logged{Model: answerModel{}, Log: w, Prices: DefaultPrices}
	ctx := WithTurn(WithTable(context.Background(), "tbl"), "t7")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Complete(ctx, Request{Agent: "narrative"}); err != nil {
			b.Fatal(err)
		}
	}
}
