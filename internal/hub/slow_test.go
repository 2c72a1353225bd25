package hub

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
)

// syncBuf is a log sink safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A client that stops reading is closed with 1008 "too slow" once its
// queue and the socket buffers are full, and the close is logged (it
// used to see 1006 after ~25 s, unlogged). Real socket, no timing: the test pumps big events until the table has dropped the
// client, then reads.
func TestSlowClientGets1008(t *testing.T) {
	ctx := context.Background()
	var logs syncBuf
	h, _ := testHub(t, func(c *Config) {
		c.Log = slog.New(slog.NewTextHandler(&logs, nil))
		c.ShutdownGrace = time.Second
	})
	ts, err := h.CreateTable(ctx, engine.Player{ID: "p-o", Name: "Owner"}, TableSpec{Name: "Slow"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeWS(w, r, ts.ID, nil) }))
	defer srv.Close()
	conn, _, err := websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1), &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(1 << 20)
	tb, _ := h.table(ts.ID)
	// open reports whether the table holds the client and has not yet
	// asked it to close.
	open := func() bool {
		ok := false
		if err := tb.call(ctx, func() error {
			for c := range tb.clients {
				ok = ok || !c.isClosing()
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for !open() { // the join is queued on the table
	}
	big := strings.Repeat("x", 8<<10)
	for sent := 0; open(); sent += 10 {
		if sent > 100_000 {
			t.Fatal("the client that never reads was never dropped")
		}
		tb.post(func() {
			for range 10 {
				tb.publishNow(t, []engine.Event{engine.SystemEvent("test", big)})
			}
		})
	}
	// Now read: the frames that made it into the socket, then the close.
	var closeErr error
	for {
		if _, _, err := conn.Read(ctx); err != nil {
			closeErr = err
			break
		}
	}
	var ce websocket.CloseError
	if !errors.As(closeErr, &ce) || ce.Code != websocket.StatusPolicyViolation || ce.Reason != "too slow" {
		t.Errorf("read ended with %v, want close 1008 too slow", closeErr)
	}
	if !strings.Contains(logs.String(), `msg="closing websocket" table=`+ts.ID+` code=1008 reason="too slow"`) {
		t.Errorf("the slow client's close is not logged:\n%.2000s", logs.String())
	}
}
