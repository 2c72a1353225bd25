package web

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"tavern/internal/hub"
)

// Quotas bound how fast one client address may create players and tables
// (one token created 200 tables in 1.1 s). Each is a token
// bucket: PerMinute a minute, bursts of Burst. A zero field takes its
// default; Off turns both quotas off (load tests: TAVERN_QUOTAS=off).
type Quotas struct {
	Off bool
	// PlayersPerMinute and PlayersBurst: POST /api/players. Default 20, 20.
	PlayersPerMinute, PlayersBurst int
	// TablesPerMinute and TablesBurst: POST /api/tables. Default 6, 10.
	TablesPerMinute, TablesBurst int
}

func (q Quotas) withDefaults() Quotas {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&q.PlayersPerMinute, 20)
	def(&q.PlayersBurst, 20)
	def(&q.TablesPerMinute, 6)
	def(&q.TablesBurst, 10)
	return q
}

// QuotaStore counts creations in the store, for a cluster: every node
// then sees what the others allowed (DESIGN.md "Beyond one machine").
// TakeQuota records one creation of kind by key unless key made limit of
// them within window, and then returns id 0 and how long until one leaves
// the window; ReturnQuota gives a recorded one back. internal/pgdb is one.
// Implementations must be safe for concurrent use.
type QuotaStore interface {
	TakeQuota(ctx context.Context, kind, key string, limit int, window time.Duration) (id int64, wait time.Duration, err error)
	ReturnQuota(ctx context.Context, id int64) error
}

// maxQuotaKeys bounds the addresses a quota remembers; past it, addresses
// whose bucket is full again are forgotten.
const maxQuotaKeys = 10000

// quota is one token bucket per client address. Safe for concurrent use;
// a nil *quota allows everything. (Its own bucket rather than
// rate.Limiter, which cannot give a spent token back.)
type quota struct {
	perSec float64
	burst  float64
	now    func() time.Time
	mu     sync.Mutex
	by     map[string]*bucket
	// shared, when set, counts in the store instead, as kind: at most
	// burst creations within the time the bucket takes to fill (the same
	// rate and burst), over the whole cluster.
	shared QuotaStore
	kind   string
	log    *slog.Logger
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newQuota(perMinute, burst int, now func() time.Time) *quota {
	return &quota{perSec: float64(perMinute) / 60, burst: float64(burst), now: now, by: map[string]*bucket{}}
}

// fill brings b up to now; the caller holds q.mu.
func (q *quota) fill(b *bucket, now time.Time) {
	if dt := now.Sub(b.at).Seconds(); dt > 0 {
		b.tokens = math.Min(q.burst, b.tokens+dt*q.perSec)
	}
	b.at = now
}

// take spends one token of key's bucket and returns a refund that gives
// it back; when there is none it returns how long until there will be one.
func (q *quota) take(key string) (refund func(), wait time.Duration) {
	if q == nil {
		return func() {}, 0
	}
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	b, ok := q.by[key]
	if !ok {
		if len(q.by) >= maxQuotaKeys {
			for k, old := range q.by {
				if q.fill(old, now); old.tokens >= q.burst {
					delete(q.by, k)
				}
			}
		}
		b = &bucket{tokens: q.burst, at: now}
		q.by[key] = b
	}
	q.fill(b, now)
	if b.tokens < 1 {
		return nil, time.Duration((1 - b.tokens) / q.perSec * float64(time.Second))
	}
	b.tokens--
	return func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		b.tokens = math.Min(q.burst, b.tokens+1)
	}, 0
}

// takeShared is take for a quota counted in the store. A store that
// cannot count lets the creation through (which then meets the same
// store), rather than refusing everyone.
func (q *quota) takeShared(ctx context.Context, key string) (refund func(), wait time.Duration) {
	window := time.Duration(q.burst / q.perSec * float64(time.Second))
	id, wait, err := q.shared.TakeQuota(ctx, q.kind, key, int(q.burst), window)
	if err != nil {
		q.log.Warn("quota not counted", "what", q.kind, "addr", key, "err", err)
		return func() {}, 0
	}
	if id == 0 {
		return nil, max(wait, time.Second)
	}
	return func() {
		// The request's context may be done by now.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := q.shared.ReturnQuota(ctx, id); err != nil {
			q.log.Warn("quota not refunded", "what", q.kind, "addr", key, "err", err)
		}
	}, 0
}

// clientAddr is the address quotas count by: the peer's IP. Forwarding
// headers are not trusted, as anyone can send them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// allow charges one creation to the request's address and returns a
// refund for a request then refused as invalid (a typo costs no quota).
// When the quota is spent it answers 429 with Retry-After (whole seconds,
// rounded up) and returns nil.
func (s *Server) allow(w http.ResponseWriter, r *http.Request, q *quota, what string) (refund func()) {
	var wait time.Duration
	if q != nil && q.shared != nil {
		refund, wait = q.takeShared(r.Context(), clientAddr(r))
	} else {
		refund, wait = q.take(clientAddr(r))
	}
	if refund != nil {
		return refund
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.log.Info("quota exceeded", "what", what, "addr", clientAddr(r), "retry_after_s", secs)
	s.error(w, r, &apiError{code: hub.CodeRateLimited, message: "Too many " + what + " created from your address; retry in " + strconv.Itoa(secs) + " s."})
	return nil
}
