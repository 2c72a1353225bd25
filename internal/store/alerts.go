package store

import "time"

// AlertRecord is one alert of the operator's history (PROTOCOL.md
// "Operator, continued"): raised at RaisedAt with what its rule measured
// (Value) against its Threshold, cleared at ClearedAt (nil while it
// fires). Value and Threshold are in the rule's unit: a share for error
// rates, seconds for latencies and waits, USD for spend.
type AlertRecord struct {
	AlertID   string
	Rule      string
	Severity  string
	Summary   string
	Value     float64
	Threshold float64
	TableID   string
	RaisedAt  time.Time
	ClearedAt *time.Time
}

// Bounds of the stored alert history: the stores keep the last
// AlertHistoryMax alerts raised and none raised more than AlertHistoryAge
// ago.
const (
	AlertHistoryMax = 1000
	AlertHistoryAge = 30 * 24 * time.Hour
)
