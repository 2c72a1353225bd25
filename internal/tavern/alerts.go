package tavern

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tavern/internal/alert"
	"tavern/internal/store"
)

// alertStore is what the alerts need of the store: the open actions the
// rules read and the history they keep.
type alertStore interface {
	OldestOpenActions(ctx context.Context) (map[string]time.Time, error)
	RaiseAlert(ctx context.Context, r store.AlertRecord) error
	ClearAlert(ctx context.Context, alertID string, at time.Time) error
	AlertHistory(ctx context.Context, limit int) ([]store.AlertRecord, error)
}

// alertCluster is what the alert rules read of a cluster (internal/pgdb):
// its nodes, and this node's id.
type alertCluster interface {
	Nodes(ctx context.Context) ([]store.Node, error)
	NodeID() string
}

// alerts runs the operator's alert rules (internal/alert) every
// AlertEvery and on demand, over what the recorder saw of the models and
// the store and the store's open actions, and keeps what it raises and
// clears in the store, so the history outlives a restart. Safe for
// concurrent use.
type alerts struct {
	th      alert.Thresholds
	rec     *alert.Recorder
	tracker *alert.Tracker
	store   alertStore
	// log reports what could not be written to the history: the rules
	// go on without it (a full disk is when they matter most).
	log func(err error)
	// cluster is the cluster this node is one of (nil with SQLite: one
	// node): the rules read its nodes, and name this one.
	cluster alertCluster
	now     func() time.Time

	mu       sync.Mutex
	lastWait time.Duration // the oldest open action's wait at the last run
	// evalMu makes one run at a time update the tracker and write what
	// changed, so a clear is never written before its raise.
	evalMu sync.Mutex

	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

func newAlerts(cfg Config, st alertStore, log func(err error)) *alerts {
	return &alerts{
		th: alert.Thresholds{ModelErrorRate: cfg.AlertModelErrorRate, ModelMinCalls: 5, ModelP95: cfg.AlertModelP95,
			SpendHourUSD: cfg.AlertSpendHourUSD, ActionWait: cfg.AlertActionWait, CommitP95: cfg.AlertCommitP95, Window: 5 * time.Minute},
		rec: &alert.Recorder{}, tracker: &alert.Tracker{}, store: st, log: log, now: time.Now, stop: make(chan struct{}),
	}
}

// call is the model calls' observer (agent.Logged.Observe).
func (a *alerts) call(c store.LLMCall) {
	a.rec.Call(c.Started.Add(c.Latency), c.Model, c.Latency, c.Error != "", c.CostUSD)
}

// commit is the store's commit observer's part (db.WriteObserver.Commit).
func (a *alerts) commit(wait time.Duration) { a.rec.Commit(a.now(), wait) }

// restore reads the stored history back into the tracker: the last
// alerts raised, those not cleared firing until the next run.
func (a *alerts) restore(ctx context.Context) error {
	rows, err := a.store.AlertHistory(ctx, historyShown)
	if err != nil {
		return err
	}
	h := make([]alert.Record, len(rows))
	for i, r := range rows {
		h[i] = alert.Record{Alert: alert.Alert{ID: r.AlertID, Rule: r.Rule, Severity: r.Severity, Summary: r.Summary, Since: r.RaisedAt,
			TableID: r.TableID, Value: r.Value, Threshold: r.Threshold}, Cleared: r.ClearedAt}
	}
	a.tracker.Restore(h)
	return nil
}

// historyShown is how much of the stored history the tracker holds: more
// than the overview shows.
const historyShown = 200

// evaluate runs the rules now, updates the tracker and writes what it
// raised and cleared to the store.
func (a *alerts) evaluate(ctx context.Context) error {
	a.evalMu.Lock()
	defer a.evalMu.Unlock()
	now := a.now()
	in := alert.Inputs{}
	a.rec.Fill(&in, now, a.th.Window)
	open, err := a.store.OldestOpenActions(ctx)
	if err != nil {
		return err
	}
	in.Waiting = open
	var oldest time.Duration
	for _, at := range open {
		oldest = max(oldest, now.Sub(at))
	}
	if a.cluster != nil {
		ns, err := a.cluster.Nodes(ctx)
		if err != nil {
			return err
		}
		for _, n := range ns {
			in.Nodes = append(in.Nodes, alert.Node{ID: n.ID, Addr: n.Addr, State: n.State})
		}
		in.Node = a.cluster.NodeID()
	}
	a.mu.Lock()
	a.lastWait = oldest
	a.mu.Unlock()
	raised, cleared := a.tracker.Update(alert.Evaluate(a.th, in, now), now)
	for _, r := range raised {
		if err := a.store.RaiseAlert(ctx, store.AlertRecord{AlertID: r.ID, Rule: r.Rule, Severity: r.Severity, Summary: r.Summary,
			Value: r.Value, Threshold: r.Threshold, TableID: r.TableID, RaisedAt: r.Since}); err != nil {
			a.log(err)
		}
	}
	for _, id := range cleared {
		if err := a.store.ClearAlert(ctx, id, now); err != nil {
			a.log(err)
		}
	}
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
