package hub

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
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
// Hijack gives the library smaller buffers than net/http's.
type smallBuffers struct{ http.ResponseWriter }

func (s smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
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
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(conn, writeBuffer)), nil
}
