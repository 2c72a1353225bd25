package hub

import (
	"bytes"
	"net"
	"testing"
)

// writesConn is a net.Conn that records each Write it is given.
type writesConn struct {
	net.Conn
	writes [][]byte
}

func (w *writesConn) Write(p []byte) (int, error) {
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

// TestBurstConn: what the library writes between hold and release leaves
// in one write, in order; outside a hold each write leaves at once; a
// hold that gathers burstMax bytes writes them without waiting.
func TestBurstConn(t *testing.T) {
	under := &writesConn{}
	b := &burstConn{Conn: under}
	b.Write([]byte("a"))
	b.hold()
	b.Write([]byte("bc"))
	b.Write([]byte("d"))
	if len(under.writes) != 1 {
		t.Fatalf("writes while holding: %q", under.writes)
	}
	if err := b.release(); err != nil {
		t.Fatal(err)
	}
	b.Write([]byte("e"))
	if got := bytes.Join(under.writes, []byte("|")); string(got) != "a|bcd|e" {
		t.Errorf("writes %q, want a|bcd|e", got)
	}
	under.writes = nil
	b.hold()
	b.Write(make([]byte, burstMax))
	if len(under.writes) != 1 || len(under.writes[0]) != burstMax {
		t.Errorf("a full burst was not written at once: %d writes", len(under.writes))
	}
	if err := b.release(); err != nil || len(under.writes) != 1 {
		t.Errorf("release after a full burst: %v, %d writes", err, len(under.writes))
	}
}
