package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"tavern/internal/store"
)

// CallLog stores calls. internal/db satisfies it. Implementations must be
// safe for concurrent use.
type CallLog interface {
	LogCall(ctx context.Context, c store.LLMCall) error
}

// CallBatchLog is a CallLog that also stores several calls in one write,
// all or none (internal/db: one transaction). CallWriter uses it when its
// store has it.
type CallBatchLog interface {
	CallLog
	LogCalls(ctx context.Context, calls []store.LLMCall) error
}

// CallQueue is a CallBatchLog that also takes a batch without waiting for
// it to be written: QueueCalls returns once the batch is queued (ctx bounds
// that wait), then calls done exactly once with the result; done must not
// block. internal/db queues the batch with its group-commit writer.
// CallWriter uses it when its store has it, so a busy store slows the
// call log by its queue, not by a round trip per batch (at a saturated
// store, waiting for each batch dropped a quarter of the calls).
type CallQueue interface {
	CallBatchLog
	QueueCalls(ctx context.Context, calls []store.LLMCall, done func(error)) error
}

// maxCallBatch bounds the calls CallWriter writes at once.
const maxCallBatch = 256

// Price is what a model costs, in US dollars per million tokens. Cached
// prompt tokens are billed at Cached instead of Input.
type Price struct {
	Input, Cached, Output float64
}

// Prices maps model ids to prices. A model that is not listed costs 0
// (local servers).
type Prices map[string]Price

// DefaultPrices are list prices of common OpenAI models (USD per million
// tokens, 2026-11); TAVERN_PRICES overrides or extends them.
var DefaultPrices = Prices{
	"gpt-4o-mini":  {Input: 0.15, Cached: 0.075, Output: 0.60},
	"gpt-4o":       {Input: 2.50, Cached: 1.25, Output: 10},
	"gpt-4.1-mini": {Input: 0.40, Cached: 0.10, Output: 1.60},
	"gpt-4.1":      {Input: 2.00, Cached: 0.50, Output: 8},
	"gpt-5-mini":   {Input: 0.25, Cached: 0.025, Output: 2},
	"gpt-5":        {Input: 1.25, Cached: 0.125, Output: 10},
}

// ParsePrices reads a price table: entries "model=input/cached/output"
// (USD per million tokens) separated by commas or semicolons, e.g.
// "gpt-4o-mini=0.15/0.075/0.6; llama3=0/0/0".
func ParsePrices(s string) (Prices, error) {
	out := Prices{}
	for _, e := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		name, vals, ok := strings.Cut(e, "=")
		parts := strings.Split(vals, "/")
		if !ok || strings.TrimSpace(name) == "" || len(parts) != 3 {
			return nil, fmt.Errorf("price %q: want model=input/cached/output", e)
		}
		var f [3]float64
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || v < 0 {
				return nil, fmt.Errorf("price %q: %q is not a non-negative number", e, p)
			}
			f[i] = v
		}
		out[strings.TrimSpace(name)] = Price{Input: f[0], Cached: f[1], Output: f[2]}
	}
	return out, nil
}

// Cost estimates the cost of usage u with model in USD.
func (p Prices) Cost(model string, u Usage) float64 {
	pr, ok := p[model]
	if !ok {
		return 0
	}
	cached := min(u.CachedTokens, u.PromptTokens)
	return (float64(u.PromptTokens-cached)*pr.Input + float64(cached)*pr.Cached + float64(u.CompletionTokens)*pr.Output) / 1e6
}

// Logged wraps a model so every call is written to a CallLog with its
// table (from the context, see WithTable), agent, latency, tokens,
// estimated cost and error, and counted by Health. A failure to log is
// itself only logged: the game never waits on its bookkeeping. Safe for
// concurrent use if Model and Log are.
type Logged struct {
	Model  Model
	Log    CallLog
	Prices Prices
	// Health, if set, counts each call as it finishes, except those
	// its caller cancelled (a table closing says nothing of the model).
	Health *Health
	// Budget, if set, counts each call's cost (see Budget).
	Budget *Budget
	// Observe, if set, sees each call as it finishes, but for those its
	// caller cancelled, like Health: the operator's alerts. It must not
	// block.
	Observe func(store.LLMCall)
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Name implements Model.
func (l *Logged) Name() string { return l.Model.Name() }

// CanSummarize implements Summarizer for the wrapped model.
func (l *Logged) CanSummarize() bool { return canSummarize(l.Model) }

// Complete implements Model.
func (l *Logged) Complete(ctx context.Context, req Request) (Response, error) {
	now := l.Now
	if now == nil {
		now = time.Now
	}
	start := now()
	resp, err := l.Model.Complete(ctx, req)
	end := now()
	if l.Health != nil && !(err != nil && errors.Is(ctx.Err(), context.Canceled)) {
		l.Health.Record(l.Model.Name(), end, err)
	}
	c := store.LLMCall{TableID: TableFrom(ctx), Turn: TurnFrom(ctx), Agent: req.Agent, Model: l.Model.Name(), Started: start.UTC(), Latency: end.Sub(start),
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, CachedTokens: resp.Usage.CachedTokens,
		PromptVersion: PromptVersion(req.Agent)}
	c.LatencyMS = c.Latency.Milliseconds()
	c.CostUSD = l.Prices.Cost(c.Model, resp.Usage)
	if l.Budget != nil {
		l.Budget.Add(c.TableID, c.CostUSD, end)
	}
	if err != nil {
		c.Error = err.Error()
		c.ErrorKind = ErrorKind(err)
	}
	if l.Observe != nil && !(err != nil && errors.Is(ctx.Err(), context.Canceled)) {
		l.Observe(c)
	}
	if lerr := l.logCall(ctx, c); lerr != nil && l.Logger != nil {
		l.Logger.Warn("log model call", "err", lerr)
	}
	return resp, err
}

// logCall writes c to the log. A CallWriter only queues it and never
// waits, so it gets c without a timer of its own (every model
// call made one). Any other log gets a context of its own, since the
// turn's may be the one that just expired and the row is still worth
// writing.
func (l *Logged) logCall(ctx context.Context, c store.LLMCall) error {
	if w, ok := l.Log.(*CallWriter); ok {
		return w.LogCall(ctx, c)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return l.Log.LogCall(lctx, c)
}

type turnKey struct{}

// WithTurn returns ctx carrying the table turn ("t12") a model call is
// made for; the call log records it so the operator can open the turn.
func WithTurn(ctx context.Context, turn string) context.Context {
	return context.WithValue(ctx, turnKey{}, turn)
}

// TurnFrom returns the turn carried by ctx, or "".
func TurnFrom(ctx context.Context) string {
	s, _ := ctx.Value(turnKey{}).(string)
	return s
}

var (
	statusRe  = regexp.MustCompile(`\b(401|403|429|5\d\d)\b`)
	invalidRe = regexp.MustCompile(`(?i)invalid|unmarshal|json|parse|malformed`)
)

// ErrorKind sorts a failed model call for the operator: store.CallTimeout
// (the deadline passed), CallRateLimit (HTTP 429), CallServer (HTTP 5xx),
// CallAuth (HTTP 401 or 403: the key or its rights), CallInvalidOutput
// (the answer could not be read) or CallOther. The adapters' errors carry
// the HTTP status in their text (openai-go's *openai.Error does), which
// keeps this package free of any SDK.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(strings.ToLower(msg), "timeout"):
		return store.CallTimeout
	}
	switch statusRe.FindString(msg) {
	case "":
	case "429":
		return store.CallRateLimit
	case "401", "403":
		return store.CallAuth
	default:
		return store.CallServer
	}
	if invalidRe.MatchString(msg) {
		return store.CallInvalidOutput
	}
	return store.CallOther
}

// ErrCallDropped is returned by CallWriter.LogCall when its queue is full.
var ErrCallDropped = errors.New("call log queue full: call dropped")

// CallWriter takes the call log off the model path: LogCall only queues
// the call (never blocks; a full queue drops it and counts the drop), and
// one goroutine, started by NewCallWriter and stopped by Close, writes
// whatever is queued to the store — in one write when the store is a
// CallBatchLog, without waiting for it when the store is a CallQueue —
// and hands each call to the metrics once it is stored. Safe for
// concurrent use.
type CallWriter struct {
	store   CallLog
	observe func(store.LLMCall)
	dropped func()
	log     *slog.Logger
	queue   chan store.LLMCall
	stop    chan struct{}
	wg      sync.WaitGroup // the goroutine and the batches queued with a CallQueue
	once    sync.Once
	mu      sync.RWMutex // held for reading by LogCall, for writing by Close
	closed  bool
}

// CallWriterConfig configures a CallWriter.
type CallWriterConfig struct {
	// Store receives every call (internal/db). Required.
	Store CallLog
	// Observe, if set, sees every call after it is stored (the metrics).
	Observe func(store.LLMCall)
	// Dropped, if set, is called for each call lost to a full queue or a
	// failed write.
	Dropped func()
	// Queue bounds the calls waiting to be written (default 1024).
	Queue int
	Log   *slog.Logger
}

// NewCallWriter starts a writer; Close stops it.
func NewCallWriter(cfg CallWriterConfig) *CallWriter {
	if cfg.Queue <= 0 {
		cfg.Queue = 1024
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	w := &CallWriter{store: cfg.Store, observe: cfg.Observe, dropped: cfg.Dropped, log: cfg.Log,
		queue: make(chan store.LLMCall, cfg.Queue), stop: make(chan struct{})}
	w.wg.Add(1)
	go w.run()
	return w
}

// LogCall implements CallLog: it queues c and returns at once.
func (w *CallWriter) LogCall(_ context.Context, c store.LLMCall) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		select {
		case w.queue <- c:
			return nil
		default:
		}
	}
	if w.dropped != nil {
		w.dropped()
	}
	return ErrCallDropped
}

func (w *CallWriter) run() {
	defer w.wg.Done()
	for {
		select {
		case c := <-w.queue:
			w.write(w.fill(c))
		case <-w.stop:
			for {
				select {
				case c := <-w.queue:
					w.write(w.fill(c))
				default:
					return
				}
			}
		}
	}
}

// fill returns c and, if the store takes batches, the calls queued behind
// it, at most maxCallBatch.
func (w *CallWriter) fill(c store.LLMCall) []store.LLMCall {
	batch := []store.LLMCall{c}
	if _, ok := w.store.(CallBatchLog); !ok {
		return batch
	}
	for len(batch) < maxCallBatch {
		select {
		case c := <-w.queue:
			batch = append(batch, c)
		default:
			return batch
		}
	}
	return batch
}

// write stores batch (or queues it, with a CallQueue), counts each call
// of a failed write as dropped and observes every call.
func (w *CallWriter) write(batch []store.LLMCall) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if q, ok := w.store.(CallQueue); ok {
		w.wg.Add(1)
		err := q.QueueCalls(ctx, batch, func(err error) {
			defer w.wg.Done()
			w.stored(batch, err)
		})
		if err != nil { // not queued: done never runs
			w.stored(batch, err)
			w.wg.Done()
		}
		return
	}
	if b, ok := w.store.(CallBatchLog); ok {
		w.stored(batch, b.LogCalls(ctx, batch))
		return
	}
	lost := 0
	for _, c := range batch {
		if err := w.store.LogCall(ctx, c); err != nil {
			w.log.Warn("log model call", "err", err)
			lost++
		}
	}
	w.counted(batch, lost)
}

// stored accounts for batch, which the store wrote whole or, if err is
// set, not at all.
func (w *CallWriter) stored(batch []store.LLMCall, err error) {
	lost := 0
	if err != nil {
		w.log.Warn("log model calls", "calls", len(batch), "err", err)
		lost = len(batch)
	}
	w.counted(batch, lost)
}

// counted counts lost calls of batch as dropped and observes every call.
func (w *CallWriter) counted(batch []store.LLMCall, lost int) {
	for range lost {
		if w.dropped != nil {
			w.dropped()
		}
	}
	if w.observe != nil {
		for _, c := range batch {
			w.observe(c)
		}
	}
}

// Close writes the calls still queued and stops the writer. Safe to call
// twice; LogCall after Close drops.
func (w *CallWriter) Close() error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		w.mu.Unlock()
		close(w.stop)
	})
	w.wg.Wait()
	return nil
}
