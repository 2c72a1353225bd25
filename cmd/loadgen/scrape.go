package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// families reads a server's metrics, by name: its /metrics over HTTP
// (scraped), or the in-process server's registry (gathered).
type families func(ctx context.Context) (map[string]*dto.MetricFamily, error)

// scraped reads the Prometheus text the server at url serves, with the
// bearer token if not empty.
func scraped(url, token string) families {
	return func(ctx context.Context) (map[string]*dto.MetricFamily, error) {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return nil, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", url, res.Status)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(res.Body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", url, err)
		}
		return fams, nil
	}
}

// gathered reads g, the in-process server's registry.
func gathered(g prometheus.Gatherer) families {
	return func(context.Context) (map[string]*dto.MetricFamily, error) {
		mfs, err := g.Gather()
		if err != nil {
			return nil, err
		}
		out := make(map[string]*dto.MetricFamily, len(mfs))
		for _, f := range mfs {
			out[f.GetName()] = f
		}
		return out, nil
	}
}

// value returns the value of the one series of a counter or gauge.
func value(fams map[string]*dto.MetricFamily, name string) (float64, bool) {
	f := fams[name]
	if f == nil || len(f.Metric) == 0 {
		return 0, false
	}
	m := f.Metric[0]
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// ackMetric is the server's histogram of the time from an act read off
// its socket to its ack (internal/hub's tavern_ack_seconds): the server's
// share of the ack latency the bots measure, without theirs.
const ackMetric = "tavern_ack_seconds"

// histogram is one series of a Prometheus histogram: cumulative counts
// at increasing upper bounds, the last +Inf.
type histogram struct {
	le  []float64
	cum []float64
}

// acksOf returns the server's histogram of the acks of acts, if it has one.
func acksOf(fams map[string]*dto.MetricFamily) (histogram, bool) {
	f := fams[ackMetric]
	if f == nil {
		return histogram{}, false
	}
	for _, m := range f.Metric {
		act := false
		for _, l := range m.Label {
			act = act || l.GetName() == "frame" && l.GetValue() == "act"
		}
		if !act || m.Histogram == nil {
			continue
		}
		var h histogram
		for _, b := range m.Histogram.Bucket {
			h.le = append(h.le, b.GetUpperBound())
			h.cum = append(h.cum, float64(b.GetCumulativeCount()))
		}
		h.le = append(h.le, math.Inf(1))
		h.cum = append(h.cum, float64(m.Histogram.GetSampleCount()))
		return h, true
	}
	return histogram{}, false
}

// since returns the observations h holds that earlier did not (earlier
// is the same series, read before); an empty earlier leaves h whole.
func (h histogram) since(earlier histogram) histogram {
	if len(earlier.cum) != len(h.cum) {
		return h
	}
	out := histogram{le: h.le, cum: make([]float64, len(h.cum))}
	for i := range h.cum {
		out.cum[i] = h.cum[i] - earlier.cum[i]
	}
	return out
}

func (h histogram) count() float64 {
	if len(h.cum) == 0 {
		return 0
	}
	return h.cum[len(h.cum)-1]
}

// quantile estimates the q-quantile as PromQL's histogram_quantile does:
// linearly within the bucket that holds it (from 0 for the first); in the
// +Inf bucket it is the highest finite bound.
func (h histogram) quantile(q float64) time.Duration {
	n := h.count()
	if n == 0 {
		return 0
	}
	rank := q * n
	lo, below := 0.0, 0.0
	for i, le := range h.le {
		if h.cum[i] >= rank {
			if math.IsInf(le, 1) {
				return seconds(lo)
			}
			return seconds(lo + (le-lo)*(rank-below)/(h.cum[i]-below))
		}
		lo, below = le, h.cum[i]
	}
	return seconds(lo)
}

// within returns the share of the observations at or under bound, which
// must be one of h's bounds (else the next one down counts).
func (h histogram) within(bound time.Duration) float64 {
	n := h.count()
	if n == 0 {
		return 0
	}
	got := 0.0
	for i, le := range h.le {
		if le <= bound.Seconds()+1e-12 {
			got = h.cum[i]
		}
	}
	return got / n
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ackReport is the line that sums up h (acksOf), against the goal's 5 ms
// and 25 ms.
func ackReport(h histogram) string {
	return fmt.Sprintf("%.0f acks, p50 ≈ %s p99 ≈ %s (bucket-interpolated); %.1f%% within 5ms, %.1f%% within 25ms",
		h.count(), round(h.quantile(.5)), round(h.quantile(.99)), 100*h.within(5*time.Millisecond), 100*h.within(25*time.Millisecond))
}

// round keeps three significant figures or so: the estimates are coarse.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}

// metricsURL is the /metrics of the server at base.
func metricsURL(base string) string { return strings.TrimSuffix(base, "/") + "/metrics" }

// serverAcks follows the server's ack histogram over a play run: read at
// the start, once the warm-up is over, and at the end.
type serverAcks struct {
	read  families
	start histogram
	timer *time.Timer
	mu    sync.Mutex
	warm  *histogram // read warmup after the start; nil before (or if that read failed)
}

// watchAcks reads the histogram now and, if warmup > 0, again warmup later.
func watchAcks(ctx context.Context, read families, warmup time.Duration) (*serverAcks, error) {
	s := &serverAcks{read: read}
	var err error
	if s.start, err = s.now(ctx); err != nil {
		return nil, err
	}
	if warmup > 0 {
		s.timer = time.AfterFunc(warmup, func() {
			if h, err := s.now(ctx); err == nil {
				s.mu.Lock()
				s.warm = &h
				s.mu.Unlock()
			}
		})
	}
	return s, nil
}

// now reads the histogram; a server that has acked nothing yet has none,
// which reads as empty.
func (s *serverAcks) now(ctx context.Context) (histogram, error) {
	fams, err := s.read(ctx)
	if err != nil {
		return histogram{}, err
	}
	h, _ := acksOf(fams)
	return h, nil
}

// report writes what the server counted since the start, and since the
// warm-up's end if it came.
func (s *serverAcks) report(ctx context.Context, out io.Writer) error {
	if s.timer != nil {
		s.timer.Stop()
	}
	h, err := s.now(ctx)
	if err != nil {
		return err
	}
	if h.since(s.start).count() == 0 {
		fmt.Fprintf(out, "  server-side acks: none counted (the server has no %s)\n", ackMetric)
		return nil
	}
	fmt.Fprintf(out, "  server-side acks (%s: act read → ack queued), whole run: %s\n", ackMetric, ackReport(h.since(s.start)))
	s.mu.Lock()
	warm := s.warm
	s.mu.Unlock()
	if warm != nil {
		fmt.Fprintf(out, "    of those after -warmup: %s\n", ackReport(h.since(*warm)))
	}
	return nil
}
