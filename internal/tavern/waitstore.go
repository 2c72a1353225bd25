package tavern

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"tavern/adventures"
	"tavern/internal/pgdb"
)

// A node whose PostgreSQL is out of reach at start listens at once, so
// that a health check sees why it does not serve rather than a refused
// connection: /healthz answers 200, /readyz 503 with the reason, every
// other request 503 `unavailable` with Retry-After (PROTOCOL.md
// "Several nodes"). It tries the database again every storeRetry, saying
// so in the log each time, and once it is reachable builds the server and
// serves, with no restart.

// storeRetry is how often a node waiting for its database tries it.
const storeRetry = 2 * time.Second

// Ready is closed once the store is open and the server built: at once
// from New, unless PostgreSQL was out of reach then. The exported fields
// other than Config, Log, Handler and AdminToken may be read only after
// it is closed.
func (t *Tavern) Ready() <-chan struct{} { return t.readyc }

func (t *Tavern) serveHTTP(w http.ResponseWriter, r *http.Request) {
	(*t.handler.Load()).ServeHTTP(w, r)
}

// setReady marks the server built: Listen's address, if it listens
// already, goes to the node's row, and Ready is closed.
func (t *Tavern) setReady() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ready = true
	if t.ln != nil && t.PG != nil && t.Config.NodeAddr == "" {
		if err := t.PG.SetAddr(context.Background(), t.ln.Addr().String()); err != nil {
			t.Log.Error("the node's address is not in the store: other nodes cannot forward to it", "err", err)
		}
	}
	close(t.readyc)
}

// awaitStore serves the waiting answers and tries the store every
// storeRetry until it opens and the server is built, or Close.
func (t *Tavern) awaitStore(ctx context.Context, lib *adventures.Library, first error) {
	ctx, t.stopWait = context.WithCancel(context.WithoutCancel(ctx))
	t.waitDone = make(chan struct{})
	w := &waiting{}
	w.reason.Store(&first)
	var h http.Handler = w
	t.handler.Store(&h)
	where := pgdb.Where(t.Config.DB)
	t.Log.Warn("PostgreSQL is not reachable yet; listening, answering 503 until it is", "db", where, "attempt", 1, "retry_in", storeRetry, "err", first)
	go func() {
		defer close(t.waitDone)
		for attempt := 2; ; attempt++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(storeRetry):
			}
			s, unlock, err := t.openStore(ctx)
			if err == nil {
				t.DB, t.unlockDB = s, unlock
				if err = t.build(ctx, lib); err != nil {
					t.unbuild()
				}
			}
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				t.setReady()
				t.Log.Info("PostgreSQL is reachable: serving", "db", where, "attempt", attempt)
				return
			}
			w.reason.Store(&err)
			if pgdb.Unreachable(err) {
				t.Log.Warn("PostgreSQL is not reachable yet", "db", where, "attempt", attempt, "retry_in", storeRetry, "err", err)
			} else {
				t.Log.Error("PostgreSQL refuses this node", "db", where, "attempt", attempt, "retry_in", storeRetry, "err", err)
			}
		}
	}()
}

// unbuild releases what a failed build (in the wait) made, so that the
// next attempt starts afresh.
func (t *Tavern) unbuild() {
	if t.alerts != nil {
		t.alerts.close()
	}
	t.synced.close()
	if t.Hub != nil {
		t.Hub.Close()
	}
	if t.calls != nil {
		t.calls.Close()
	}
	if t.data != nil {
		t.data.Close()
	}
	if t.DB != nil {
		t.DB.Close()
	}
	if t.unlockDB != nil {
		t.unlockDB()
	}
	t.DB, t.Store, t.PG, t.Hub, t.calls, t.data, t.alerts, t.unlockDB = nil, nil, nil, nil, nil, nil, nil, nil
}

// waiting answers while the store is out of reach.
type waiting struct {
	reason atomic.Pointer[error]
}

func (w *waiting) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/healthz":
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte("ok\n"))
		return
	case r.URL.Path == "/readyz":
		// The operator's probe gets the cause; clients do not.
		tryAgain(rw, r, retry, "", "not ready: the store is not reachable yet: "+(*w.reason.Load()).Error())
		return
	}
	tryAgain(rw, r, retry, "the server cannot reach its database yet", "The server cannot reach its database yet; try again shortly.")
}

const retry = int(storeRetry / time.Second)
