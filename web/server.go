// Package web is Tavern's HTTP layer: the JSON API and the websocket
// endpoint of PROTOCOL.md, the server-rendered pages (templ components: the
// lobby and the table page) with their embedded static files, and the
// operational endpoints /healthz, /readyz and /metrics.
//
// Start with [New] and [Server.Handler]; routes.go lists every route. The
// package holds no game state of its own: tables live in the hub
// ([hub.Hub]), player identities in a [Players] store (internal/db). It
// imports hub, store and engine but never agent or db (DESIGN.md's import
// rule): the DM's records reach it through the hub, as store records and
// hub views; the operator's data agent through an [Asker], as dataset
// replies (web/ask.go). Every error reaches the client as {"error": {"code",
// "message"}} with a matching HTTP status (errors.go, through the hub's one
// mapping: hub.ErrorCode and hub.HTTPStatus); internal errors are logged,
// never shown. Requests are validated by the engine's rules
// (engine.CleanName, engine.TableSpec.Validate…), which the hub applies to
// what web passes on.
//
// Player and model text is always escaped: templ escapes what the pages
// render, and static/table.js only ever sets textContent.
package web

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// Players stores player identities. Only the SHA-256 hash of a player's
// token is ever stored. internal/db satisfies it. Implementations must be
// safe for concurrent use.
type Players interface {
	// CreatePlayer stores p with the hash of its secret token.
	CreatePlayer(ctx context.Context, p engine.Player, tokenHash []byte) error
	// PlayerByTokenHash returns the player whose token hashes to hash, or an
	// engine ENOTFOUND error if there is none.
	PlayerByTokenHash(ctx context.Context, hash []byte) (engine.Player, error)
}

// tables is the part of *hub.Hub the web layer uses; an interface so that
// handler tests can exercise error paths with a fake.
type tables interface {
	List() []hub.TableSummary
	CreateTable(ctx context.Context, owner engine.Player, spec hub.TableSpec) (hub.TableSummary, error)
	Sit(ctx context.Context, tableID string, p engine.Player, spec engine.NewCharacterSpec) (hub.Character, error)
	Leave(ctx context.Context, tableID string, p engine.Player) error
	Snapshot(ctx context.Context, tableID string) (hub.Snapshot, error)
	Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error)
	Stream(ctx context.Context, tableID string, since int64) (hub.Stream, error)
	ServeWS(w http.ResponseWriter, r *http.Request, tableID string, p *engine.Player)
	Classes() []engine.Class
	AdventureIDs() []string
	DM() string
	Ready() bool
	Health() error
	StartSession(ctx context.Context, tableID string, p engine.Player) (string, error)
	Quests(ctx context.Context, tableID string) ([]hub.QuestView, error)
	Inventory(ctx context.Context, tableID string, p engine.Player) (hub.Character, error)
	ownerTables // web/owners.go
	ownerHub    // web/notes.go
}

// Config is what a Server needs.
type Config struct {
	// Hub runs the tables. Required.
	Hub *hub.Hub
	// Players stores identities. Required.
	Players Players
	// Log receives request errors and internal failures; nil discards them.
	Log *slog.Logger
	// Metrics, if set, receives the HTTP metrics (requests by route and
	// status, durations by route). If it is also a prometheus.Gatherer (as
	// *prometheus.Registry is), /metrics serves it; otherwise /metrics
	// serves a private registry holding the HTTP metrics and the Go and
	// process collectors.
	Metrics prometheus.Registerer
	// AdminToken is the operator's token (PROTOCOL.md "Operator
	// (admin)"); only its SHA-256 hash is kept. Empty: nobody can sign in
	// to /admin, the admin API or /metrics.
	AdminToken string
	// Quotas bound player and table creation per client address; the zero
	// value takes the defaults (see Quotas).
	Quotas Quotas
	// QuotaStore, if set, counts those creations in the store, so that
	// the quotas hold over every node of a cluster; without it each
	// quota is a token bucket in memory.
	QuotaStore QuotaStore
	// Ask, if set, answers the operator's questions (the data agent);
	// without it the Ask page says it is not configured.
	Ask Asker
	// Adventures, if set, serves the adventures API and pages
	// (web/adventures.go); without it they answer 404.
	Adventures Adventures
	// Operator, if set, serves budgets, alerts, players and console users
	// (PROTOCOL.md "Operator, continued"; web/operator.go).
	Operator Operator
}

// Server serves Tavern over HTTP. Its handler is safe for concurrent use.
type Server struct {
	hub      tables
	admin    adminHub // nil on a fake tables: no operator's console
	players  Players
	log      *slog.Logger
	metrics  *metrics
	ask      Asker
	operator Operator
	handler  http.Handler
	// adminHash is the SHA-256 of the admin token, nil if there is none.
	adminHash []byte
	// started is when the server was built: the overview's uptime.
	started time.Time
	// assetVersion is a hash of the static files, appended to their URLs
	// so browsers can cache them forever and still see a new release.
	assetVersion string
	// playerQuota and tableQuota are nil when quotas are off.
	playerQuota, tableQuota *quota
	adventures              Adventures
	// adventureQuota bounds adventures created, replaced and forked as
	// tableQuota bounds tables (nil when quotas are off); validateQuota
	// the editor's checks as you type.
	adventureQuota, validateQuota *quota
	// adminTries throttles wrong admin tokens per address (admin_auth.go).
	adminTries *quota
}

// The page's files, not their tests (static/*.test.mjs).
//
//go:embed static/*.js static/*.css static/*.svg
var staticFS embed.FS

// New returns a Server for cfg. It panics if cfg.Hub or cfg.Players is nil
// (a wiring bug, not a runtime condition).
func New(cfg Config) *Server {
	if cfg.Hub == nil {
		panic("web.New: nil Hub")
	}
	return newServer(cfg.Hub, cfg)
}

// newServer builds a Server on any tables implementation; cfg.Hub is
// ignored.
func newServer(t tables, cfg Config) *Server {
	if cfg.Players == nil {
		panic("web.New: nil Players")
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		hub:          t,
		players:      cfg.Players,
		log:          log,
		metrics:      newMetrics(cfg.Metrics),
		ask:          cfg.Ask,
		adventures:   cfg.Adventures,
		operator:     cfg.Operator,
		assetVersion: staticVersion(),
		started:      time.Now(),
	}
	if a, ok := t.(adminHub); ok {
		s.admin = a
	}
	if cfg.AdminToken != "" {
		h := sha256.Sum256([]byte(cfg.AdminToken))
		s.adminHash = h[:]
	}
	s.adminTries = newQuota(int(time.Minute/adminTryEvery), adminTryBurst, time.Now)
	if q := cfg.Quotas.withDefaults(); !q.Off {
		s.playerQuota = newQuota(q.PlayersPerMinute, q.PlayersBurst, time.Now)
		s.tableQuota = newQuota(q.TablesPerMinute, q.TablesBurst, time.Now)
		s.adventureQuota = newQuota(q.TablesPerMinute, q.TablesBurst, time.Now)
		if cfg.QuotaStore != nil {
			for kind, q := range map[string]*quota{"players": s.playerQuota, "tables": s.tableQuota, "adventures": s.adventureQuota} {
				q.shared, q.kind, q.log = cfg.QuotaStore, kind, s.log
			}
		}
		s.validateQuota = newQuota(validatesPerMinute, validatesBurst, time.Now)
	}
	s.handler = readDeadline(s.routes())
	return s
}

// ReadTimeout bounds reading one request (headers and body) on every
// route but the websocket: a client that trickles its body is cut off
// instead of holding a connection. Streams clear it.
const ReadTimeout = 30 * time.Second

// readDeadline sets ReadTimeout on the request's connection; the
// websocket upgrade is exempt (the hub reads it for as long as it lives).
func readDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/ws/") {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(ReadTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

// MaxHeaderBytes bounds a request's line and header fields. The root
// handler answers a larger request 431 too_large with the protocol's
// error body.
const MaxHeaderBytes = 64 << 10

// ServerMaxHeaderBytes is for http.Server.MaxHeaderBytes. Past that limit
// net/http answers 431 itself, in plain text, before any handler runs, so
// it lies well above MaxHeaderBytes: every header between the two gets the
// JSON answer. (net/http's default, so what a connection may buffer is
// unchanged.)
const ServerMaxHeaderBytes = 1 << 20

// limitHeaders answers a request whose line and header fields exceed
// MaxHeaderBytes with 431 and the error body, and closes the connection.
func (s *Server) limitHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if headerBytes(r) > MaxHeaderBytes {
			w.Header().Set("Connection", "close")
			s.error(w, r, &apiError{status: http.StatusRequestHeaderFieldsTooLarge, code: hub.CodeTooLarge,
				message: "Request header fields too large."})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// headerBytes is about what r's line and header fields took on the wire.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return n
}

// Handler returns the root handler: every route, with security headers.
func (s *Server) Handler() http.Handler { return s.handler }

// staticVersion hashes every embedded static file.
func staticVersion() string {
	h := sha256.New()
	var names []string
	_ = fs.WalkDir(staticFS, "static", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, path)
		}
		return nil
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := staticFS.ReadFile(n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
