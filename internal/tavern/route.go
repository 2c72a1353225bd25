package tavern

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/hub"
	"tavern/internal/pgdb"
)

// Routing between nodes (DESIGN.md "Beyond one machine"): any node
// accepts any request; one about a table another live node runs is passed
// to that node, byte for byte (HTTP, SSE, websockets), so clients and
// PROTOCOL.md do not change. A forwarded request carries the hop headers,
// signed with the cluster token: they prove it came from a node (a client
// can never set them: they are stripped unless their signature holds) and
// carry the client's address, which the quotas count. A request is never
// forwarded twice: a node that gets a forwarded request for a table
// another node runs answers 503 Retry-After: 1, or closes the websocket
// 1013, and the client tries again.

const (
	hopHeader    = "X-Tavern-Hop"    // "<unix seconds>.<hex HMAC>"
	clientHeader = "X-Tavern-Client" // the client's address (host:port)
	// hopSkew bounds the age of a hop signature.
	hopSkew = time.Minute
)

// router forwards the requests about tables other nodes run.
type router struct {
	next  http.Handler
	pg    *pgdb.DB
	token []byte
	log   *slog.Logger
	proxy *httputil.ReverseProxy
	// invite returns the id of the table an invite code opens.
	invite func(ctx context.Context, code string) (string, error)
	// online lists who is connected to this node (online.go).
	online func(ctx context.Context) []hub.OnlinePlayer
}

func newRouter(next http.Handler, pg *pgdb.DB, token string, log *slog.Logger, invite func(ctx context.Context, code string) (string, error)) *router {
	rt := &router{next: next, pg: pg, token: []byte(token), log: log, invite: invite}
	rt.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			to := pr.In.Context().Value(ownerKey{}).(*url.URL)
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host // the hub checks websocket origins against it
			rt.sign(pr.Out, pr.In.RemoteAddr)
		},
		FlushInterval: -1, // streams (SSE) pass each event at once
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			rt.log.Warn("forward to the owner failed", "path", r.URL.Path, "err", err)
			unavailable(w, r)
		},
	}
	return rt
}

type ownerKey struct{}

// tableOf returns the table id a path names ("" if none).
func tableOf(path string) string {
	for _, prefix := range []string{"/api/tables/", "/ws/tables/", "/tables/", "/admin/tables/", "/api/admin/tables/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			id, _, _ := strings.Cut(rest, "/")
			return id
		}
	}
	return ""
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	forwarded := rt.verify(r)
	if r.URL.Path == onlinePath && forwarded && rt.online != nil {
		rt.serveOnline(w, r)
		return
	}
	id := tableOf(r.URL.Path)
	if code, ok := strings.CutPrefix(r.URL.Path, "/join/"); ok && rt.invite != nil {
		// An invite link names its table only through the store; an
		// unknown code is the local node's to answer (404).
		id, _ = rt.invite(r.Context(), code)
	}
	if id == "" {
		rt.next.ServeHTTP(w, r)
		return
	}
	owner, addr, err := rt.owner(r.Context(), id)
	if err != nil || owner == "" || owner == rt.pg.NodeID() {
		// Nobody runs it (this node claims it as it loads), or this
		// node does; a failed lookup is the local store's to answer.
		rt.next.ServeHTTP(w, r)
		return
	}
	if forwarded {
		// The node that sent it thought this one ran the table: it moved
		// meanwhile. Never forward twice.
		unavailable(w, r)
		return
	}
	to := &url.URL{Scheme: "http", Host: addr}
	rt.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ownerKey{}, to)))
}

// drainWait bounds how long a request waits for a draining node to
// release its table: it does once the table's running turn is done.
const drainWait = 3 * time.Second

// owner returns the node running table id and its address; a table whose
// node is draining is waited for, so that its clients, told to reconnect
// at once, find it served by the node that claims it next.
func (rt *router) owner(ctx context.Context, id string) (string, string, error) {
	deadline := time.Now().Add(drainWait)
	for {
		owner, addr, _, draining, err := rt.pg.Owner(ctx, id)
		if err != nil || !draining || owner == rt.pg.NodeID() || time.Now().After(deadline) {
			return owner, addr, err
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// unavailable answers a request the client should send again shortly:
// 503 Retry-After: 1, or for a websocket handshake a socket closed 1013.
func unavailable(w http.ResponseWriter, r *http.Request) {
	tryAgain(w, r, 1, "the table is changing hands", "The table is changing hands; try again.")
}

// tryAgain answers a request the client should send again in retry
// seconds: 503 `unavailable` with Retry-After and message in the error
// body (PROTOCOL.md), or for a websocket handshake a socket closed 1013
// with reason.
func tryAgain(w http.ResponseWriter, r *http.Request, retry int, reason, message string) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		if c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"tavern.v1"}}); err == nil {
			c.Close(websocket.StatusTryAgainLater, reason)
		}
		return
	}
	w.Header().Set("Retry-After", strconv.Itoa(retry))
	hub.WriteError(w, http.StatusServiceUnavailable, hub.CodeUnavailable, message)
}

// sign sets the hop headers of a request forwarded for client.
func (rt *router) sign(out *http.Request, client string) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	out.Header.Set(clientHeader, client)
	out.Header.Set(hopHeader, ts+"."+rt.mac(ts, out.Method, out.URL.RequestURI(), client))
	out.Header.Del("X-Forwarded-For") // the client's address is the signed header
}

func (rt *router) mac(ts, method, uri, client string) string {
	m := hmac.New(sha256.New, rt.token)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s", ts, method, uri, client)
	return hex.EncodeToString(m.Sum(nil))
}

// verify strips the hop headers from r and reports whether they were a
// node's: then r's RemoteAddr becomes the client's, for the quotas.
func (rt *router) verify(r *http.Request) bool {
	hop, client := r.Header.Get(hopHeader), r.Header.Get(clientHeader)
	r.Header.Del(hopHeader)
	r.Header.Del(clientHeader)
	if hop == "" || len(rt.token) == 0 {
		return false
	}
	ts, sig, ok := strings.Cut(hop, ".")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		return false
	}
	if age := time.Since(time.Unix(sec, 0)); age > hopSkew || age < -hopSkew {
		return false
	}
	want := rt.mac(ts, r.Method, r.URL.RequestURI(), client)
	if !hmac.Equal([]byte(sig), []byte(want)) {
		rt.log.Warn("a request carried a hop header that does not verify", "remote", r.RemoteAddr)
		return false
	}
	r.RemoteAddr = client
	return true
}
