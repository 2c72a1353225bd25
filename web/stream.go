package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"tavern/internal/engine"
)

// sseHeartbeat keeps idle streams alive through proxies that close quiet
// connections.
const sseHeartbeat = 20 * time.Second

// stream is GET /api/tables/{id}/stream: the table's events as
// Server-Sent Events, with the websocket's resume policy. Each
// event is "id: <seq>" and one "data: <Event JSON>" line, so
// EventSource.onmessage sees every kind. A reconnecting EventSource sends
// Last-Event-ID, which wins over ?since=; the events after it are replayed
// when they are at most the hub's replay window behind; further behind
// (or with neither, on a table past the window) the stream starts with a
// "snapshot" SSE event (id: its seq, data: the snapshot JSON, for
// addEventListener("snapshot")), then live events. When the hub drops a
// slow subscriber the response ends; the client reconnects and resumes
// from its last id.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	v, _, err := s.viewer(r, false)
	if err == nil {
		err = s.hub.Visible(r.Context(), id, v)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	// The table may stop being open to this viewer while it reads (made
	// private, its invite code replaced, a ban): nothing more is written
	// after that, as the websocket is closed (PROTOCOL.md "Table owners").
	open := func() bool { return s.hub.Visible(r.Context(), id, v) == nil }
	sinceStr := r.Header.Get("Last-Event-ID")
	if sinceStr == "" {
		sinceStr = r.URL.Query().Get("since")
	}
	since, err := intParam(sinceStr, 0, 0, 1<<62)
	if err != nil {
		s.error(w, r, badRequest("since (or Last-Event-ID) must be a non-negative integer."))
		return
	}
	ctx := r.Context()
	sub, err := s.hub.Stream(ctx, id, since)
	if err != nil {
		s.error(w, r, err)
		return
	}
	evs := sub.Events
	rc := http.NewResponseController(w)
	// A stream outlives any server-wide write timeout and ReadTimeout (an
	// expired read deadline would end the request's context).
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil {
		return
	}
	if sub.Snapshot != nil {
		b, err := json.Marshal(sub.Snapshot)
		if err != nil {
			s.log.Error("stream: encode snapshot", "table", id, "err", err)
			return
		}
		fmt.Fprintf(w, "id: %d\nevent: snapshot\ndata: %s\n\n", sub.Snapshot.Seq, b)
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(sseHeartbeat)
	defer tick.Stop()
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if !open() {
				return
			}
			if _, err := w.Write([]byte(": ping\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		case ev, ok := <-evs:
			if !ok {
				return
			}
			buf.Reset()
			if err := appendEvent(&buf, ev); err != nil {
				s.log.Error("stream: encode event", "table", id, "seq", ev.Seq, "err", err)
				return
			}
			// Batch whatever else is ready into one write and flush. A
			// closed channel is seen on the next turn of the loop.
		drain:
			for range 64 {
				select {
				case ev, ok := <-evs:
					if !ok {
						break drain
					}
					if err := appendEvent(&buf, ev); err != nil {
						s.log.Error("stream: encode event", "table", id, "seq", ev.Seq, "err", err)
						return
					}
				default:
					break drain
				}
			}
			if !open() {
				return
			}
			if _, err := w.Write(buf.Bytes()); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// appendEvent appends ev as one SSE message.
func appendEvent(buf *bytes.Buffer, ev engine.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	buf.WriteString("id: ")
	buf.WriteString(strconv.FormatInt(ev.Seq, 10))
	buf.WriteString("\ndata: ")
	buf.Write(b) // json.Marshal output holds no raw newline
	buf.WriteString("\n\n")
	return nil
}

// websocket is GET /ws/tables/{id}: the hub accepts and serves the socket.
// The player, if the request carries a valid token (cookie, bearer or
// ?token=), is resolved here; the hub reads ?role= and ?since= itself.
func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	p, err := s.player(r, true)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.hub.ServeWS(w, r, id, p)
}
