package pgdb_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store"
)

// stallProxy forwards loopback TCP to the test cluster's socket until
// stalled: then it holds every connection open and forwards nothing, as
// a half-open connection does.
type stallProxy struct {
	ln      net.Listener
	mu      sync.Mutex
	stalled bool
	wake    chan struct{}
}

func newStallProxy(t *testing.T, socket string) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, wake: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

// pipe copies src to dst, holding each chunk while the proxy is stalled.
func (p *stallProxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		wake := p.wake
		stalled := p.stalled
		p.mu.Unlock()
		if stalled {
			<-wake
			// A chunk held across a stall belongs to a connection the
			// client gave up: drop the connection.
			src.Close()
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
			}
			return
		}
	}
}

func (p *stallProxy) stall(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on == p.stalled {
		return
	}
	p.stalled = on
	if !on {
		close(p.wake)
		p.wake = make(chan struct{})
	}
}

// TestTxDeadline: a connection that stops answering mid-transaction fails
// the transaction at Options.TxTimeout as a storage fault: the store says
// it cannot write, and the commit, retried, lands once the way is clear.
func TestTxDeadline(t *testing.T) {
	raw := pgtest.URL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := newStallProxy(t, filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432"))
	host, port, err := net.SplitHostPort(p.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("host", host)
	q.Set("port", port)
	u.RawQuery = q.Encode()
	d, err := pgdb.Open(ctx, u.String(), pgdb.Options{MaxConns: 4, TxTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	newTable(t, d, "t1")
	p.stall(true)
	done := make(chan error, 1)
	if err := d.Enqueue(ctx, store.Commit{TableID: "t1", Events: chatAt(1)}, func(err error) { done <- err }); err != nil {
		t.Fatal(err)
	}
	for d.Unavailable() == nil {
		select {
		case err := <-done:
			t.Fatalf("answered (%v) through a stalled connection", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.stall(false)
	if err := <-done; err != nil {
		t.Fatalf("the commit once the connection answers: %v", err)
	}
	if seq := lastSeq(t, d, "t1"); seq != 1 {
		t.Fatalf("seq %d, want 1", seq)
	}
}
