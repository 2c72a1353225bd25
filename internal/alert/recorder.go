package alert

import (
	"sync"
	"time"
)

// Recorder keeps the recent model calls and store commits the rules read:
// the last hour of calls (model, latency, failed, cost) and the last
// window of commits, each in a bounded ring (the oldest are dropped
// first). Its methods are safe for concurrent use and never block on I/O,
// so they can be called from the model and store paths.
type Recorder struct {
	mu      sync.Mutex
	calls   []call
	commits []commit
}

type call struct {
	at      time.Time
	model   string
	latency time.Duration
	failed  bool
	usd     float64
}

type commit struct {
	at   time.Time
	wait time.Duration
}

// Bounds of the rings: enough for a busy hour, a few MB at most.
const (
	maxCalls   = 100_000
	maxCommits = 50_000
)

// Call records a model call that ended at at.
func (r *Recorder) Call(at time.Time, model string, latency time.Duration, failed bool, usd float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = appendBounded(r.calls, call{at, model, latency, failed, usd}, maxCalls)
}

// Commit records a store commit answered at at after waiting wait.
func (r *Recorder) Commit(at time.Time, wait time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.commits = appendBounded(r.commits, commit{at, wait}, maxCommits)
}

func appendBounded[T any](s []T, v T, n int) []T {
	if len(s) >= n {
		s = append(s[:0], s[len(s)-n/2:]...)
	}
	return append(s, v)
}

// Fill sets in's Models, SpendHourUSD, Commits and CommitP95 from what
// was recorded up to now: the models and commits over window, the spend
// over the last hour. It forgets what is older than an hour.
func (r *Recorder) Fill(in *Inputs, now time.Time, window time.Duration) {
	if window <= 0 {
		window = 5 * time.Minute
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	hour := now.Add(-time.Hour)
	i := 0
	for i < len(r.calls) && r.calls[i].at.Before(hour) {
		i++
	}
	r.calls = append(r.calls[:0], r.calls[i:]...)
	from := now.Add(-window)
	byModel := map[string]*ModelStats{}
	lat := map[string][]time.Duration{}
	var order []string
	in.SpendHourUSD = 0
	for _, c := range r.calls {
		in.SpendHourUSD += c.usd
		if c.at.Before(from) {
			continue
		}
		m := byModel[c.model]
		if m == nil {
			m = &ModelStats{Model: c.model}
			byModel[c.model] = m
			order = append(order, c.model)
		}
		m.Calls++
		if c.failed {
			m.Errors++
		} else {
			lat[c.model] = append(lat[c.model], c.latency)
		}
	}
	in.Models = in.Models[:0]
	for _, name := range order {
		m := byModel[name]
		m.P95 = Percentile(lat[name], 0.95)
		in.Models = append(in.Models, *m)
	}
	j := 0
	for j < len(r.commits) && r.commits[j].at.Before(from) {
		j++
	}
	r.commits = append(r.commits[:0], r.commits[j:]...)
	waits := make([]time.Duration, len(r.commits))
	for k, c := range r.commits {
		waits[k] = c.wait
	}
	in.Commits, in.CommitP95 = len(waits), Percentile(waits, 0.95)
}
