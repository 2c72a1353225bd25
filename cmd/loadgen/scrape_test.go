package main

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The server's ack histogram as the hub registers it, read through the
// registry (as in-process) and the Prometheus text (as over HTTP).
func TestAcksOf(t *testing.T) {
	reg := prometheus.NewRegistry()
	hv := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: ackMetric, Buckets: []float64{.005, .025, .1}}, []string{"frame"})
	reg.MustRegister(hv)
	read := gathered(reg)
	fams, err := read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := acksOf(fams); ok {
		t.Error("no ack yet: no series")
	}
	// 100 acts: 50 under 5 ms, 40 in (5, 25] ms, 9 in (25, 100] ms, 1
	// over; and says, not counted.
	for n, d := range map[int]float64{50: .002, 40: .01, 9: .05, 1: .5} {
		for range n {
			hv.WithLabelValues("act").Observe(d)
			hv.WithLabelValues("say").Observe(1)
		}
	}
	if fams, err = read(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, ok := acksOf(fams)
	if !ok || h.count() != 100 {
		t.Fatalf("acks %+v, %v", h, ok)
	}
	if got := h.within(5 * time.Millisecond); got != .5 {
		t.Errorf("within 5ms %v, want 0.5", got)
	}
	if got := h.within(25 * time.Millisecond); got != .9 {
		t.Errorf("within 25ms %v, want 0.9", got)
	}
	// The median is the top of the first bucket; the 99th in (25, 100] ms,
	// at its top; the 99.5th in +Inf, which reads as the highest bound.
	for q, want := range map[float64]time.Duration{.5: 5 * time.Millisecond, .7: 15 * time.Millisecond, .99: 100 * time.Millisecond, .995: 100 * time.Millisecond} {
		if got := h.quantile(q); (got - want).Abs() > time.Microsecond {
			t.Errorf("quantile(%v) = %s, want %s", q, got, want)
		}
	}
	// What came after a first read.
	for range 10 {
		hv.WithLabelValues("act").Observe(.001)
	}
	fams, _ = read(context.Background())
	later, _ := acksOf(fams)
	if d := later.since(h); d.count() != 10 || d.within(5*time.Millisecond) != 1 || d.quantile(.99) > 5*time.Millisecond {
		t.Errorf("since: %+v", d)
	}
	if d := later.since(histogram{}); d.count() != 110 {
		t.Errorf("since an empty read: %v acks, want all 110", d.count())
	}
	if !math.IsInf(h.le[len(h.le)-1], 1) {
		t.Errorf("last bound %v, want +Inf", h.le[len(h.le)-1])
	}
	if r := ackReport(later.since(h)); !strings.Contains(r, "10 acks") || !strings.Contains(r, "100.0% within 5ms") {
		t.Errorf("report %q", r)
	}
}
