package hub

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Buffer sizes of a socket once upgraded. net/http hands the hijacked
// connection over with its own 4 KiB reader and 4 KiB writer, which the
// websocket library keeps for the socket's life: 8 KiB of every idle
// socket (issue 12). Clients send small frames (a large one is read
// past the buffer), and the writer only has to hold a control frame
// whole: data goes through a wire.
const (
	readBuffer  = 512
	writeBuffer = 128 // a control frame: 2-byte header, ≤125 bytes
	// A burst's gathered bytes go out once they pass wireFlush; a pooled
	// buffer larger than wireKeep is dropped rather than kept.
	wireFlush = 32 << 10
	wireKeep  = 64 << 10
)

// smallBuffers is the http.ResponseWriter handed to websocket.Accept: its
// Hijack gives the library small buffers over a wire instead of
// net/http's, which are then garbage once the handler returns.
type smallBuffers struct {
	http.ResponseWriter
	wire *wire
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
	s.wire = &wire{conn: conn}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(s.wire, writeBuffer)), nil
}

// wire is the connection under the websocket library's writer. Outside a
// burst it writes through (the library's own frames: pong, close); during
// one (hold … release, by the client's writer) it gathers every message
// in a pooled buffer and sends them with one write(2): a client with
// several frames queued gets them in one system call, and an idle socket
// holds no write buffer. Safe for concurrent use.
type wire struct {
	conn net.Conn
	mu   sync.Mutex
	held bool
	buf  *[]byte
	err  error // sticky: a failed write leaves the stream cut mid-frame
}

var wireBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if !w.held {
		return len(p), w.send(p)
	}
	if w.buf == nil {
		w.buf = wireBufs.Get().(*[]byte)
	}
	*w.buf = append(*w.buf, p...)
	if len(*w.buf) >= wireFlush {
		return len(p), w.flush()
	}
	return len(p), nil
}

// hold starts a burst: writes are gathered until release.
func (w *wire) hold() {
	w.mu.Lock()
	w.held = true
	w.mu.Unlock()
}

// release ends a burst, sending what it gathered.
func (w *wire) release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.held = false
	if w.err != nil {
		return w.err
	}
	return w.flush()
}

// flush sends the gathered bytes and gives the buffer back to the pool.
func (w *wire) flush() error {
	if w.buf == nil {
		return nil
	}
	err := w.send(*w.buf)
	if cap(*w.buf) <= wireKeep {
		*w.buf = (*w.buf)[:0]
		wireBufs.Put(w.buf)
	}
	w.buf = nil
	return err
}

// send writes p to the connection; a write stuck past writeTimeout fails
// (a client that stopped reading), and so does every later one.
func (w *wire) send(p []byte) error {
	if err := w.conn.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		w.err = err
		return err
	}
	if _, err := w.conn.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}
