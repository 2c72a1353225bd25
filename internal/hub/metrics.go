package hub

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tavern/internal/store"
)

// Metrics are the game server's Prometheus metrics: tables,
// sockets, turns, event fan-out, closed sockets, the model calls fed by
// the call log's writer (ObserveCall), and the store's writer (StoreCommit,
// StoreTransaction, StoreQueue). Labels are bounded: role, agent,
// model, result, close code, never a table or player id. Build one with
// NewMetrics, hand it to the hub (Config.Metrics) and to the call log
// writer; a nil *Metrics records nothing. Safe for concurrent use.
type Metrics struct {
	turns         *prometheus.CounterVec
	turnDuration  *prometheus.HistogramVec
	events        prometheus.Counter
	deliveries    *prometheus.CounterVec
	socketsClosed *prometheus.CounterVec
	moderation    *prometheus.CounterVec
	llmRequests   *prometheus.CounterVec
	llmLatency    *prometheus.HistogramVec
	llmTokens     *prometheus.CounterVec
	llmCost       *prometheus.CounterVec
	callsDropped  prometheus.Counter
	restarts      prometheus.Counter
	acks          map[string]prometheus.Observer // by frame: act, say
	storeCommit   *prometheus.HistogramVec
	storeTx       prometheus.Histogram
	storeBatch    prometheus.Histogram
	storeCkpt     *prometheus.HistogramVec
	storeQueue    atomic.Pointer[func() int]
	gauges        *hubCollector
}

// NewMetrics registers the metrics on reg (one registry, passed in; never
// the global default). It panics if reg already holds metrics of the same
// names (a wiring bug).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_turns_total",
			Help: "DM turns by agent (narrative, combat) and result (ok, failed, discarded)."}, []string{"agent", "result"}),
		turnDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tavern_turn_duration_seconds",
			Help:    "Duration of DM turns by agent, from start to commit.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 40, 80}}, []string{"agent"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "tavern_events_total",
			Help: "Events committed and published by the tables."}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_event_deliveries_total",
			Help: "Event fan-out: events handed to websocket clients (socket) and to stream subscribers (subscriber)."}, []string{"to"}),
		socketsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_sockets_closed_total",
			Help: "Websocket connections closed, by role and close code (1008: too slow or flooding, 4003: seat freed by the operator)."}, []string{"role", "code"}),
		moderation: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_moderation_total",
			Help: "Operator moderation actions by action."}, []string{"action"}),
		llmRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_llm_requests_total",
			Help: "Model calls by model, agent and result (ok, timeout, rate_limit, server, invalid_output, other)."}, []string{"model", "agent", "result"}),
		llmLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tavern_llm_request_duration_seconds",
			Help:    "Model call latency by model and agent.",
			Buckets: []float64{.1, .25, .5, 1, 2, 4, 8, 15, 30, 60, 120}}, []string{"model", "agent"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_llm_tokens_total",
			Help: "Model tokens by model and kind (prompt, cached, completion; cached is part of prompt)."}, []string{"model", "kind"}),
		llmCost: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tavern_llm_cost_usd_total",
			Help: "Estimated model cost in US dollars by model."}, []string{"model"}),
		callsDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "tavern_llm_calllog_dropped_total",
			Help: "Model calls the call log could not keep (its queue was full or the store failed)."}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{Name: "tavern_table_restarts_total",
			Help: "Tables restarted from the store because a commit failed behind others in flight."}),
		storeCommit: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tavern_store_commit_seconds",
			Help:    "Time from a commit queued with the store to its answer (what an ack or a turn waits for the disk), by result (ok, failed).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}, []string{"result"}),
		storeTx: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tavern_store_transaction_seconds",
			Help:    "Duration of the store writer's transactions (each holds one or more commits).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}}),
		storeBatch: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tavern_store_transaction_commits",
			Help:    "Commits per store transaction (group commit).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64}}),
		storeCkpt: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tavern_store_checkpoint_seconds",
			Help:    "Duration of the store's WAL checkpoints by mode (passive: beside the writer; restart: on the writer, every commit waiting) and result (ok, busy: gave up or failed).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}, []string{"mode", "result"}),
		gauges: &hubCollector{
			tables:  prometheus.NewDesc("tavern_tables", "Tables by state: loaded (open, in memory), active (a turn running or someone connected), paused, closed.", []string{"state"}, nil),
			sockets: prometheus.NewDesc("tavern_sockets", "Open websocket connections by role.", []string{"role"}, nil),
		},
	}
	acks := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "tavern_ack_seconds",
		Help:    "Time from a player's act or say read off its socket to its ack queued for it (durable by then), by frame (act, say): what a player waits for the server to take an action.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}}, []string{"frame"})
	m.acks = map[string]prometheus.Observer{"act": acks.WithLabelValues("act"), "say": acks.WithLabelValues("say")}
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tavern_store_queue",
		Help: "Commits waiting for the store's writer."}, func() float64 {
		if f := m.storeQueue.Load(); f != nil {
			return float64((*f)())
		}
		return 0
	})
	if reg != nil {
		for _, c := range []prometheus.Collector{m.turns, m.turnDuration, m.events, m.deliveries, m.socketsClosed, m.moderation,
			m.llmRequests, m.llmLatency, m.llmTokens, m.llmCost, m.callsDropped, m.restarts,
			acks, m.storeCommit, m.storeTx, m.storeBatch, m.storeCkpt, queue, m.gauges} {
			reg.MustRegister(c)
		}
	}
	return m
}

// ObserveCall records one model call (the call log writer calls it).
func (m *Metrics) ObserveCall(c store.LLMCall) {
	if m == nil {
		return
	}
	result := c.ErrorKind
	if result == "" && c.Error != "" {
		result = store.CallOther
	}
	if result == "" {
		result = "ok"
	}
	m.llmRequests.WithLabelValues(c.Model, c.Agent, result).Inc()
	m.llmLatency.WithLabelValues(c.Model, c.Agent).Observe(float64(c.LatencyMS) / 1000)
	m.llmTokens.WithLabelValues(c.Model, "prompt").Add(float64(c.PromptTokens))
	m.llmTokens.WithLabelValues(c.Model, "cached").Add(float64(c.CachedTokens))
	m.llmTokens.WithLabelValues(c.Model, "completion").Add(float64(c.CompletionTokens))
	m.llmCost.WithLabelValues(c.Model).Add(c.CostUSD)
}

// StoreCommit records a commit the store answered: wait is the time from
// its queueing to the answer (internal/db's WriteObserver).
func (m *Metrics) StoreCommit(wait time.Duration, failed bool) {
	if m == nil {
		return
	}
	result := "ok"
	if failed {
		result = "failed"
	}
	m.storeCommit.WithLabelValues(result).Observe(wait.Seconds())
}

// StoreTransaction records one transaction of the store's writer.
func (m *Metrics) StoreTransaction(took time.Duration, commits int) {
	if m == nil {
		return
	}
	m.storeTx.Observe(took.Seconds())
	m.storeBatch.Observe(float64(commits))
}

// StoreCheckpoint records one WAL checkpoint of the store (internal/db's
// WriteObserver).
func (m *Metrics) StoreCheckpoint(mode string, took time.Duration, finished bool) {
	if m == nil {
		return
	}
	result := "ok"
	if !finished {
		result = "busy"
	}
	m.storeCkpt.WithLabelValues(mode, result).Observe(took.Seconds())
}

// StoreQueue reads the store's queue length (commits waiting for its
// writer) at each scrape from queued.
func (m *Metrics) StoreQueue(queued func() int) {
	if m != nil {
		m.storeQueue.Store(&queued)
	}
}

// CallDropped counts a model call the call log lost.
func (m *Metrics) CallDropped() {
	if m != nil {
		m.callsDropped.Inc()
	}
}

func (m *Metrics) turn(agentName, result string, seconds float64) {
	if m == nil {
		return
	}
	m.turns.WithLabelValues(agentName, result).Inc()
	m.turnDuration.WithLabelValues(agentName).Observe(seconds)
}

func (m *Metrics) published(events, sockets, subs int) {
	if m == nil {
		return
	}
	m.events.Add(float64(events))
	m.deliveries.WithLabelValues("socket").Add(float64(events * sockets))
	m.deliveries.WithLabelValues("subscriber").Add(float64(events * subs))
}

// acked records the ack of a frame (act, say) read since.
func (m *Metrics) acked(frame string, since time.Time) {
	if m != nil {
		m.acks[frame].Observe(time.Since(since).Seconds())
	}
}

func (m *Metrics) tableRestarted() {
	if m != nil {
		m.restarts.Inc()
	}
}

func (m *Metrics) socketClosed(role string, code int) {
	if m != nil {
		m.socketsClosed.WithLabelValues(role, strconv.Itoa(code)).Inc()
	}
}

func (m *Metrics) moderated(action string) {
	if m != nil {
		m.moderation.WithLabelValues(action).Inc()
	}
}

// hubCollector reads the table and socket gauges from the hub at scrape
// time, from each table's published counters (no call into the tables).
type hubCollector struct {
	tables, sockets *prometheus.Desc
	hub             atomic.Pointer[Hub]
}

func (c *hubCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tables
	ch <- c.sockets
}

func (c *hubCollector) Collect(ch chan<- prometheus.Metric) {
	var loaded, active, paused, closed, players, spectators float64
	if h := c.hub.Load(); h != nil {
		h.mu.RLock()
		for _, t := range h.tables {
			s := t.admin.Load()
			switch {
			case s.Closed:
				closed++
				continue
			case s.Paused:
				paused++
			}
			loaded++
			if s.Busy || s.Players+s.Spectators > 0 {
				active++
			}
			players += float64(s.Players)
			spectators += float64(s.Spectators)
		}
		h.mu.RUnlock()
	}
	for state, v := range map[string]float64{"loaded": loaded, "active": active, "paused": paused, "closed": closed} {
		ch <- prometheus.MustNewConstMetric(c.tables, prometheus.GaugeValue, v, state)
	}
	ch <- prometheus.MustNewConstMetric(c.sockets, prometheus.GaugeValue, players, "player")
	ch <- prometheus.MustNewConstMetric(c.sockets, prometheus.GaugeValue, spectators, "spectator")
}
