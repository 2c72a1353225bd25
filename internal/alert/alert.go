// Package alert is the operator's alerting (PROTOCOL.md "Operator,
// continued"): the rules as plain functions of what the server measured
// (Evaluate over Inputs, with Thresholds from the settings), and a
// Tracker that remembers which alerts fire, since when, and the history
// of those raised and cleared. Recorder keeps the recent model calls and
// store commits the rules read. deploy/prometheus/alerts.yml holds the
// same rules for Prometheus users, over the server's /metrics.
//
// Start with Evaluate; internal/tavern gathers the Inputs and runs it.
package alert

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// Severities.
const (
	Warning  = "warning"
	Critical = "critical"
)

// Rule ids: an alert's id is its rule, then ":" and what it is about (a
// model, a table, a node) when the rule fires for each.
const (
	RuleModelErrors  = "model_error_rate"
	RuleModelLatency = "model_latency_p95"
	RuleSpendHour    = "spend_per_hour"
	RuleActionWait   = "action_waiting"
	RuleCommit       = "store_commit_latency"
	RuleNodeMissing  = "node_missing"
)

// Thresholds are the rules' settings. A zero threshold turns its rule off.
type Thresholds struct {
	// ModelErrorRate: share of a model's calls that failed over Window.
	ModelErrorRate float64
	// ModelMinCalls: calls a model needs over Window before its error rate
	// or latency counts (a single failure is not a trend).
	ModelMinCalls int
	// ModelP95: a model's 95th-percentile latency over Window.
	ModelP95 time.Duration
	// SpendHourUSD: model spend over the last hour.
	SpendHourUSD float64
	// ActionWait: how long a player's acknowledged action may wait.
	ActionWait time.Duration
	// CommitP95: the store's 95th-percentile commit latency over Window.
	CommitP95 time.Duration
	// Window is the span of the rates and percentiles (default 5m).
	Window time.Duration
}

// ModelStats is one model's calls over the window.
type ModelStats struct {
	Model         string
	Calls, Errors int
	P95           time.Duration
}

// Node is a node of a cluster as the store's lease table sees it.
type Node struct {
	ID, Addr, State string // alive, draining or dead
}

// Inputs is what the rules read, gathered at one moment.
type Inputs struct {
	Models       []ModelStats
	SpendHourUSD float64
	// Waiting is the oldest open action of each table, by table id.
	Waiting   map[string]time.Time
	Commits   int
	CommitP95 time.Duration
	// Nodes is nil without a cluster (SQLite: one node).
	Nodes []Node
	// Node is the id of the node the rules run on, with a cluster ("":
	// none). What only this node measures (its model calls, its spend,
	// its store's commits) is alerted under its own id, so that another
	// node, which measures its own, never clears it.
	Node string
}

// Alert is one firing alert, as GET /api/admin/alerts lists it. Value is
// what its Rule measured and Threshold the setting it reached, in the
// rule's unit: a share for the error rate, seconds for latencies and
// waits, USD for spend, 1 and 0 for a missing node.
type Alert struct {
	ID        string    `json:"id"`
	Rule      string    `json:"rule"`
	Severity  string    `json:"severity"`
	Summary   string    `json:"summary"`
	Since     time.Time `json:"since"`
	TableID   string    `json:"table_id,omitempty"`
	Value     float64   `json:"value"`
	Threshold float64   `json:"threshold"`
}

// Evaluate returns the alerts the rules raise on in at now, sorted by
// id; Since is now (the Tracker keeps the first time).
func Evaluate(th Thresholds, in Inputs, now time.Time) []Alert {
	var out []Alert
	fire := func(rule, about, sev, table string, value, threshold float64, format string, args ...any) {
		id := rule
		if about != "" {
			id += ":" + about
		}
		out = append(out, Alert{ID: id, Rule: rule, Severity: sev, Summary: fmt.Sprintf(format, args...), Since: now, TableID: table,
			Value: value, Threshold: threshold})
	}
	// fireHere is fire for what this node alone measures: about names the
	// node too (model@node, or the node alone), and so does the summary.
	fireHere := func(rule, about, sev string, value, threshold float64, format string, args ...any) {
		switch {
		case in.Node == "":
		case about == "":
			about = in.Node
		default:
			about += "@" + in.Node
		}
		if in.Node != "" {
			format += " (node %s)"
			args = append(args, in.Node)
		}
		fire(rule, about, sev, "", value, threshold, format, args...)
	}
	win := th.window()
	for _, m := range in.Models {
		if m.Calls < max(1, th.ModelMinCalls) {
			continue
		}
		rate := float64(m.Errors) / float64(m.Calls)
		if th.ModelErrorRate > 0 && rate >= th.ModelErrorRate {
			sev := Warning
			if m.Errors == m.Calls {
				sev = Critical
			}
			fireHere(RuleModelErrors, m.Model, sev, rate, th.ModelErrorRate, "Model %s failed %d of %d calls (%.0f%%) in the last %s (threshold %.0f%%).",
				m.Model, m.Errors, m.Calls, rate*100, short(win), th.ModelErrorRate*100)
		}
		if th.ModelP95 > 0 && m.P95 >= th.ModelP95 {
			fireHere(RuleModelLatency, m.Model, Warning, m.P95.Seconds(), th.ModelP95.Seconds(), "Model %s answers slowly: p95 %s over the last %s (threshold %s).",
				m.Model, short(m.P95), short(win), short(th.ModelP95))
		}
	}
	if th.SpendHourUSD > 0 && in.SpendHourUSD >= th.SpendHourUSD {
		fireHere(RuleSpendHour, "", Warning, in.SpendHourUSD, th.SpendHourUSD, "The models cost $%.2f in the last hour (threshold $%.2f).", in.SpendHourUSD, th.SpendHourUSD)
	}
	if th.ActionWait > 0 {
		for table, since := range in.Waiting {
			if w := now.Sub(since); w >= th.ActionWait {
				fire(RuleActionWait, table, Warning, table, w.Seconds(), th.ActionWait.Seconds(), "A player's action has waited %s at table %s (threshold %s).", short(w), table, short(th.ActionWait))
			}
		}
	}
	if th.CommitP95 > 0 && in.Commits > 0 && in.CommitP95 >= th.CommitP95 {
		fireHere(RuleCommit, "", Critical, in.CommitP95.Seconds(), th.CommitP95.Seconds(), "The store commits slowly: p95 %s over the last %s (threshold %s).", short(in.CommitP95), short(win), short(th.CommitP95))
	}
	// A node that stalled past its lease and came back registers anew, at
	// the same address: its old incarnation is dead but nothing is
	// missing.
	back := map[string]bool{}
	for _, n := range in.Nodes {
		if n.State != "dead" && n.Addr != "" {
			back[n.Addr] = true
		}
	}
	for _, n := range in.Nodes {
		if n.State == "dead" && !back[n.Addr] {
			fire(RuleNodeMissing, n.ID, Critical, "", 1, 0, "Node %s (%s) is missing: its lease expired.", n.ID, n.Addr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (th Thresholds) window() time.Duration {
	if th.Window > 0 {
		return th.Window
	}
	return 5 * time.Minute
}

// short writes d rounded for people: 1.2s, 340ms, 12m.
func short(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}

// Percentile returns the p-th percentile (0 < p ≤ 1) of ds, nearest
// rank; 0 for none. It sorts ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds))*p+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
