package hub

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
)

// Buffer sizes of a socket once upgraded. net/http hands the hijacked
// connection over with a 4 KiB reader and a 4 KiB writer, which the
// websocket library keeps for the socket's life. Clients send small
// frames (a larger one is read past the buffer). The writer holds a
// message's header and payload until the library flushes them in one
// write(2); a chat event is a few hundred bytes, and a longer message
// costs one write more.
const (
	readBuffer  = 512
	writeBuffer = 2 << 10
)

// smallBuffers is the http.ResponseWriter handed to websocket.Accept: its
// Hijack gives the library smaller buffers than net/http's, over a
// burstConn it keeps for the socket's writer.
type smallBuffers struct {
	http.ResponseWriter
	burst *burstConn
}

func (s *smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The 101 response is flushed before the hijack; what the client sent
	// after the upgrade request may already sit in net/http's reader.
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	// They must be in the new reader's buffer, not behind it: the library
	// re-bases the reader on the connection, keeping only what is buffered
	// (golang/go#32314).
	n := brw.Reader.Buffered()
	early, _ := brw.Reader.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn), max(readBuffer, n))
	if _, err := r.Peek(n); err != nil {
		conn.Close()
		return nil, nil, err
	}
	s.burst = &burstConn{Conn: conn}
	return s.burst, bufio.NewReadWriter(r, bufio.NewWriterSize(s.burst, writeBuffer)), nil
}

// burstMax is the most a burstConn gathers before it writes anyway.
const burstMax = 64 << 10

// burstConn is the connection under the websocket library. Between hold
// and release it gathers what the library writes, whole messages one
// after another, and release sends them with one write(2): the messages
// of one wake of the socket's writer cost one system call instead of one
// each, as a client that did not ask for batches gets a message per
// frame. The library sees an ordinary connection: the bytes and their
// order are the ones it wrote, only the system calls are fewer.
type burstConn struct {
	net.Conn
	mu      sync.Mutex // orders Writes and release
	holding bool
	// buf is from burstBufs while holding, so an idle socket holds none.
	buf *[]byte
}

var burstBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// Write sends p now, or gathers it while the writer holds.
func (b *burstConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return b.Conn.Write(p)
	}
	*b.buf = append(*b.buf, p...)
	if len(*b.buf) >= burstMax {
		if err := b.flushLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// hold starts gathering.
func (b *burstConn) hold() {
	b.mu.Lock()
	if !b.holding {
		b.holding, b.buf = true, burstBufs.Get().(*[]byte)
	}
	b.mu.Unlock()
}

// release writes what was gathered and stops gathering. An error is the
// connection's: the caller closes the socket.
func (b *burstConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.holding {
		return nil
	}
	err := b.flushLocked()
	if cap(*b.buf) <= burstMax {
		burstBufs.Put(b.buf) // a larger one is left to the collector
	}
	b.holding, b.buf = false, nil
	return err
}

func (b *burstConn) flushLocked() error {
	if len(*b.buf) == 0 {
		return nil
	}
	_, err := b.Conn.Write(*b.buf)
	*b.buf = (*b.buf)[:0]
	return err
}
