package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"tavern/internal/store"
)

// CallLog stores calls. internal/db satisfies it. Implementations must be
// safe for concurrent use.
type CallLog interface {
	LogCall(ctx context.Context, c store.LLMCall) error
}

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
// estimated cost and error. A failure to log is itself only logged: the
// game never waits on its bookkeeping. Safe for concurrent use if Model
// and Log are.
type Logged struct {
	Model  Model
	Log    CallLog
	Prices Prices
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
	c := store.LLMCall{TableID: TableFrom(ctx), Agent: req.Agent, Model: l.Model.Name(), Started: start.UTC(), Latency: now().Sub(start),
		PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, CachedTokens: resp.Usage.CachedTokens}
	c.LatencyMS = c.Latency.Milliseconds()
	c.CostUSD = l.Prices.Cost(c.Model, resp.Usage)
	if err != nil {
		c.Error = err.Error()
	}
	// The turn's context may be the one that just expired; the row is
	// still worth writing.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if lerr := l.Log.LogCall(lctx, c); lerr != nil && l.Logger != nil {
		l.Logger.Warn("log model call", "err", lerr)
	}
	return resp, err
}
