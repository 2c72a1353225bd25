package hub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"net"
	"net/http"
	"sync"
	"syscall"
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
	// Gathered messages go out once they pass wireFlush; a pooled buffer
	// larger than wireKeep is dropped rather than kept.
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
	s.wire = newWire(conn)
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(s.wire, writeBuffer)), nil
}

// wire is the connection under the websocket library's writer. The
// library writes its own frames through it (pong, close: whole frames,
// each one write, since writeBuffer holds any control frame). The
// client frames its messages itself, gathered in a pooled buffer and sent
// with one write(2) per burst: a client with several frames queued gets
// them in one system call, a message costs no library lock or context,
// and an idle socket holds no write buffer (issue 12). A burst is first
// tried without waiting (tryFlush), from the goroutine that queued it.
// Safe for concurrent use; a control frame may go out between two
// gathered messages, never inside one (RFC 6455 §5.4).
type wire struct {
	conn net.Conn
	// raw writes without waiting (tryFlush); nil where the connection
	// has no file descriptor.
	raw syscall.RawConn
	mu  sync.Mutex
	buf *[]byte // the gathered messages, nil when there are none
	err error   // sticky: a failed write leaves the stream cut mid-frame
	// till is the connection's write deadline, zero for none.
	till time.Time
	// tryFD is writeFD, made once (a method value passed on allocates);
	// tried and wrote are its argument and result.
	tryFD func(fd uintptr) bool
	tried []byte
	wrote int
	werr  error
}

var wireBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func newWire(conn net.Conn) *wire {
	w := &wire{conn: conn}
	if sc, ok := conn.(syscall.Conn); ok && canWriteFD {
		if raw, err := sc.SyscallConn(); err == nil {
			w.raw = raw
			w.tryFD = w.writeFD
		}
	}
	return w
}

// Write writes p (the library's frames) through, after what is gathered:
// a message a tryFlush left half written must end first.
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.flushLocked(); err != nil {
		return 0, err
	}
	return len(p), w.send(p)
}

// message gathers one text message (RFC 6455 §5.2: a final frame, not
// masked, no extension): frames[0] alone, or a JSON array of frames (a
// batch, ?batch=1).
func (w *wire) message(frames [][]byte) {
	n := len(frames[0])
	if len(frames) > 1 {
		n = 1 // the brackets and commas
		for _, f := range frames {
			n += len(f) + 1
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf == nil {
		w.buf = wireBufs.Get().(*[]byte)
	}
	b := append(*w.buf, 0x80|0x1) // FIN, text
	switch {
	case n < 126:
		b = append(b, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 126), uint16(n))
	default:
		b = binary.BigEndian.AppendUint64(append(b, 127), uint64(n))
	}
	if len(frames) == 1 {
		b = append(b, frames[0]...)
	} else {
		sep := byte('[')
		for _, f := range frames {
			b = append(append(b, sep), f...)
			sep = ','
		}
		b = append(b, ']')
	}
	*w.buf = b
}

// size is how many bytes are gathered.
func (w *wire) size() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf == nil {
		return 0
	}
	return len(*w.buf)
}

// pending reports whether anything gathered waits for a flush.
func (w *wire) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf != nil
}

// canTry reports whether frames, as messages, are worth a tryFlush: the
// connection can be written without waiting and they fit in one flush
// (a larger burst goes to the writer, which may wait).
func (w *wire) canTry(frames [][]byte) bool {
	if w.raw == nil {
		return false
	}
	n := 0
	for _, f := range frames {
		n += len(f) + 10 // a header, or a batch's comma
	}
	return n <= wireFlush
}

// flush sends the gathered messages.
func (w *wire) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *wire) flushLocked() error {
	if w.buf == nil {
		return w.err
	}
	err := w.err
	if err == nil {
		err = w.send(*w.buf)
	}
	w.dropBuf()
	return err
}

// dropBuf gives the gathered buffer back to the pool.
func (w *wire) dropBuf() {
	if cap(*w.buf) <= wireKeep {
		*w.buf = (*w.buf)[:0]
		wireBufs.Put(w.buf)
	}
	w.buf = nil
}

// tryFlush writes what the connection's send buffer takes of the gathered
// messages now, without waiting, and reports whether that was all; the
// rest stays gathered, for flush.
func (w *wire) tryFlush() (all bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf == nil || w.err != nil {
		return w.err == nil, w.err
	}
	b := *w.buf
	n, err := w.writeNow(b)
	if err != nil {
		w.err = err
		w.dropBuf()
		return false, err
	}
	if n == len(b) {
		w.dropBuf()
		return true, nil
	}
	*w.buf = b[:copy(b, b[n:])]
	return false, nil
}

// writeNow writes what the socket takes of p without waiting: n is 0 when
// its send buffer is full. A write deadline that passed would fail it
// (the deadline moves only in send), so it is cleared first.
func (w *wire) writeNow(p []byte) (n int, err error) {
	if !w.till.IsZero() && time.Now().After(w.till) {
		if err := w.conn.SetWriteDeadline(time.Time{}); err != nil {
			return 0, err
		}
		w.till = time.Time{}
	}
	w.tried, w.wrote, w.werr = p, 0, nil
	err = w.raw.Write(w.tryFD)
	w.tried = nil
	if err != nil {
		return 0, err
	}
	return w.wrote, w.werr
}

// writeFD is one write(2) of w.tried on fd, its result in w.wrote and
// w.werr; a full send buffer or a signal is no error, just nothing
// written. It never asks to wait (true: done).
func (w *wire) writeFD(fd uintptr) bool {
	n, err := writeFD(fd, w.tried)
	switch {
	case err == errWouldBlock || err == syscall.EINTR:
	case err != nil:
		w.werr = err
	default:
		w.wrote = n
	}
	return true
}

// send writes p to the connection. A write that makes no progress for
// writeTimeout/2 to writeTimeout fails (a client that stopped reading),
// and so does every later one: the deadline moves only once half of it
// is gone, as moving it is a timer operation per write (a tenth of the
// writer's own CPU, issue 12).
func (w *wire) send(p []byte) error {
	if now := time.Now(); w.till.Sub(now) < writeTimeout/2 {
		w.till = now.Add(writeTimeout)
		if err := w.conn.SetWriteDeadline(w.till); err != nil {
			w.err = err
			return err
		}
	}
	if _, err := w.conn.Write(p); err != nil {
		w.err = err
		return err
	}
	return nil
}
