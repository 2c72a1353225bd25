package web

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the HTTP metrics, labelled by route pattern (never by raw
// path, which would grow without bound).
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	handler  http.Handler
}

func newMetrics(reg prometheus.Registerer) *metrics {
	var gatherer prometheus.Gatherer
	if reg == nil {
		r := prometheus.NewRegistry()
		r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg, gatherer = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		gatherer = g
	} else {
		gatherer = prometheus.DefaultGatherer
	}
	m := &metrics{
		requests: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tavern_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"})),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tavern_http_request_duration_seconds",
			Help:    "HTTP request durations by route pattern (streams and websockets: the whole connection).",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"})),
	}
	m.handler = promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})
	return m
}

// register registers c, or returns the collector already registered under
// the same description (two Servers sharing one registry, as in tests).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if prev, ok := are.ExistingCollector.(C); ok {
				return prev
			}
		}
		panic(err)
	}
	return c
}

// instrument wraps h to count and time the requests of one route.
func (m *metrics) instrument(route string, h http.Handler) http.Handler {
	dur := m.duration.WithLabelValues(route)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		dur.Observe(time.Since(start).Seconds())
		code := sw.status
		if code == 0 {
			// Nothing written (a hijacked websocket reports 101 itself).
			code = http.StatusOK
		}
		m.requests.WithLabelValues(route, r.Method, strconv.Itoa(code)).Inc()
	})
}

// statusWriter records the status code. Unwrap lets http.ResponseController
// and the websocket library reach Flush and Hijack on the original writer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets handlers that assert http.Flusher directly still stream.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
