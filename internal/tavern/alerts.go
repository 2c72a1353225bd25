package tavern

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tavern/internal/alert"
	"tavern/internal/store"
)

// alerts runs the operator's alert rules (internal/alert) every
// AlertEvery and on demand, over what the recorder saw of the models and
// the store and the store's open actions. Safe for concurrent use.
type alerts struct {
	th      alert.Thresholds
	rec     *alert.Recorder
	tracker *alert.Tracker
	open    func(ctx context.Context) (map[string]time.Time, error)
	// nodes, if set, lists the cluster's nodes (nil with SQLite: one node).
	nodes func() []alert.Node
	now   func() time.Time

	mu       sync.Mutex
	lastWait time.Duration // the oldest open action's wait at the last run

	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

func newAlerts(cfg Config, open func(ctx context.Context) (map[string]time.Time, error)) *alerts {
	return &alerts{
		th: alert.Thresholds{ModelErrorRate: cfg.AlertModelErrorRate, ModelMinCalls: 5, ModelP95: cfg.AlertModelP95,
			SpendHourUSD: cfg.AlertSpendHourUSD, ActionWait: cfg.AlertActionWait, CommitP95: cfg.AlertCommitP95, Window: 5 * time.Minute},
		rec: &alert.Recorder{}, tracker: &alert.Tracker{}, open: open, now: time.Now, stop: make(chan struct{}),
	}
}

// call is the model calls' observer (agent.Logged.Observe).
func (a *alerts) call(c store.LLMCall) {
	a.rec.Call(c.Started.Add(c.Latency), c.Model, c.Latency, c.Error != "", c.CostUSD)
}

// commit is the store's commit observer's part (db.WriteObserver.Commit).
func (a *alerts) commit(wait time.Duration) { a.rec.Commit(a.now(), wait) }

// evaluate runs the rules now and updates the tracker.
func (a *alerts) evaluate(ctx context.Context) error {
	now := a.now()
	in := alert.Inputs{}
	a.rec.Fill(&in, now, a.th.Window)
	open, err := a.open(ctx)
	if err != nil {
		return err
	}
	in.Waiting = open
	var oldest time.Duration
	for _, at := range open {
		oldest = max(oldest, now.Sub(at))
	}
	if a.nodes != nil {
		in.Nodes = a.nodes()
	}
	a.mu.Lock()
	a.lastWait = oldest
	a.mu.Unlock()
	a.tracker.Update(alert.Evaluate(a.th, in, now), now)
	return nil
}

// fresh evaluates unless the last run is under a second old, so that
// GET /api/admin/alerts answers what is true now without running the
// rules for every request of a busy console.
func (a *alerts) fresh(ctx context.Context) error {
	if a.now().Sub(a.tracker.Evaluated()) < time.Second {
		return nil
	}
	return a.evaluate(ctx)
}

// start runs the rules every every until close.
func (a *alerts) start(every time.Duration, log func(err error)) {
	a.done.Add(1)
	go func() {
		defer a.done.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-a.stop:
				return
			case <-tick.C:
				ctx, cancel := context.WithTimeout(context.Background(), every)
				if err := a.evaluate(ctx); err != nil {
					log(err)
				}
				cancel()
			}
		}
	}()
}

// close stops the rules' loop and waits for it; safe to call twice, and
// concurrently.
func (a *alerts) close() {
	a.stopOnce.Do(func() { close(a.stop) })
	a.done.Wait()
}

// register adds the gauge the Prometheus rule on waiting actions reads:
// no other metric says how long an action has waited.
func (a *alerts) register(r prometheus.Registerer) {
	r.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tavern_action_wait_seconds",
		Help: "How long the oldest acknowledged, unresolved player action has waited, over every table, at the last run of the alert rules."},
		func() float64 {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.lastWait.Seconds()
		}))
}
