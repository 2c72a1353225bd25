package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/hub"
)

// Asker answers the operator's questions about the server's database:
// the data agent of seed 003 (*agent.DataAgent satisfies it, with a model
// or with the offline analyst). progress hears each step as it happens,
// on the caller's goroutine. Errors are *engine.Error values: EINVALID
// for a question it cannot take, ENOTFOUND for an unknown conversation,
// EUNAVAILABLE when the model fails. Implementations must be safe for
// concurrent use.
type Asker interface {
	Ask(ctx context.Context, conversation, question string, progress func(event string, step dataset.Step)) (dataset.Reply, error)
	// ListConversations returns the past conversations, most recent
	// first.
	ListConversations(ctx context.Context) ([]dataset.ConversationSummary, error)
	// ConversationTurns returns one conversation's questions and
	// answers; ENOTFOUND if there is none.
	ConversationTurns(ctx context.Context, id string) ([]dataset.ConversationTurn, error)
}

// askRequest is the body of POST /api/admin/ask.
type askRequest struct {
	Question     string `json:"question"`
	Conversation string `json:"conversation"`
}

// askRoutes registers the "ask the data" routes on mux through
// handle; each must sit behind the operator's sign-in.
func (s *Server) askRoutes(handle func(pattern string, h http.HandlerFunc)) {
	// Asking is for moderators; a viewer reads the page.
	handle("POST /api/admin/ask", s.moderator(s.askAPI))
	handle("GET /admin/ask", s.askPage)
	handle("GET /api/admin/ask", s.askConversations)
	handle("GET /api/admin/ask/{conversation}", s.askConversation)
	handle("POST /admin/ask", s.moderator(s.askForm))
}

// askAPI is POST /api/admin/ask (PROTOCOL.md). With Accept:
// text/event-stream it answers with Server-Sent Events instead: "sql"
// (a query about to run), "rows" (its rows or error), "chart" (a chart
// or its error), each a step, then "answer" (the whole reply, as the JSON
// answer) or "error" (the error body). A question refused before any
// step is answered with the plain JSON error and its status.
func (s *Server) askAPI(w http.ResponseWriter, r *http.Request) {
	if s.ask == nil {
		s.error(w, r, &apiError{code: hub.CodeUnavailable, message: "The data agent is not configured on this server."})
		return
	}
	var req askRequest
	if err := decode(w, r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		reply, err := s.ask.Ask(r.Context(), req.Conversation, req.Question, nil)
		if err != nil {
			s.error(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, reply)
		return
	}
	sse := &askStream{w: w, rc: http.NewResponseController(w)}
	reply, err := s.ask.Ask(r.Context(), req.Conversation, req.Question, sse.event)
	switch {
	case err != nil && !sse.started:
		s.error(w, r, err)
	case err != nil:
		st, code, msg := status(err)
		if st >= 500 {
			s.log.Error("ask failed", "err", err)
		}
		sse.send("error", hub.ErrorBody{Error: hub.ErrorDetail{Code: code, Message: msg}})
	default:
		sse.send(dataset.EventAnswer, reply)
	}
}

// askStream writes progress as Server-Sent Events, starting the response
// at the first event.
type askStream struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	broken  bool
}

func (a *askStream) event(event string, step dataset.Step) { a.send(event, step) }

func (a *askStream) send(event string, v any) {
	if a.broken {
		return
	}
	if !a.started {
		a.started = true
		// A slow model may take longer than a server-wide write timeout.
		_ = a.rc.SetWriteDeadline(time.Time{})
		h := a.w.Header()
		h.Set("Content-Type", "text/event-stream; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		a.w.WriteHeader(http.StatusOK)
	}
	var buf bytes.Buffer
	buf.WriteString("event: " + event + "\ndata: ")
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		a.broken = true
		return
	}
	buf.WriteString("\n") // Encode ended the data line; a blank line ends the event.
	if _, err := a.w.Write(buf.Bytes()); err != nil || a.rc.Flush() != nil {
		// The client went away; the question still finishes and is stored.
		a.broken = true
	}
}

// askPage is GET /admin/ask: the question box, and the conversation to
// follow up when ?conversation= names one.
func (s *Server) askPage(w http.ResponseWriter, r *http.Request) {
	v := askView{Conversation: r.URL.Query().Get("conversation"), Enabled: s.ask != nil}
	if h := s.ask; h != nil {
		var err error
		if v.History, err = h.ListConversations(r.Context()); err != nil {
			s.adminFail(w, r, err)
			return
		}
		if v.Conversation != "" {
			if v.Turns, err = h.ConversationTurns(r.Context(), v.Conversation); err != nil {
				s.adminFail(w, r, err)
				return
			}
		}
	}
	s.render(w, r, http.StatusOK, askPage(v))
}

// askForm is POST /admin/ask, the page without JavaScript: a plain form
// post that renders the final answer (the script streams the steps
// instead, through askAPI).
func (s *Server) askForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		s.render(w, r, http.StatusBadRequest, askPage(askView{Error: "The form could not be read.", Enabled: s.ask != nil}))
		return
	}
	v := askView{Question: r.PostForm.Get("question"), Conversation: r.PostForm.Get("conversation"), Enabled: s.ask != nil}
	if s.ask == nil {
		v.Error = "The data agent is not configured on this server."
		s.render(w, r, http.StatusServiceUnavailable, askPage(v))
		return
	}
	reply, err := s.ask.Ask(r.Context(), v.Conversation, v.Question, nil)
	if err != nil {
		st, _, msg := status(err)
		if st >= 500 {
			s.log.Error("ask failed", "err", err)
		}
		v.Error = msg
		s.render(w, r, st, askPage(v))
		return
	}
	v.Reply, v.Conversation, v.Question = &reply, reply.Conversation, ""
	s.render(w, r, http.StatusOK, askPage(v))
}

// askView is what the Ask page shows.
type askView struct {
	Enabled      bool
	Conversation string
	// History lists the past conversations; Turns are the open one's.
	History []dataset.ConversationSummary
	Turns   []dataset.ConversationTurn
	// Question refills the box after an error.
	Question string
	Error    string
	Reply    *dataset.Reply
}

// cellText renders a result cell for the HTML table.
func cellText(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case float64:
		b, _ := json.Marshal(v)
		return string(b)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.Trim(string(b), `"`)
	}
}

// askConversations is GET /api/admin/ask → {"conversations": [...]}.
func (s *Server) askConversations(w http.ResponseWriter, r *http.Request) {
	h := s.ask
	if h == nil {
		writeJSON(w, http.StatusOK, map[string]any{"conversations": []dataset.ConversationSummary{}})
		return
	}
	cs, err := h.ListConversations(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": cs})
}

// askConversation is GET /api/admin/ask/{conversation} →
// {"conversation", "turns": [{"turn", "question", "answer", "sql"}]}.
func (s *Server) askConversation(w http.ResponseWriter, r *http.Request) {
	h := s.ask
	if h == nil {
		s.error(w, r, &apiError{code: hub.CodeNotFound, message: "No such conversation."})
		return
	}
	id := r.PathValue("conversation")
	turns, err := h.ConversationTurns(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversation": id, "turns": turns})
}

// columnLabel words a result's column for the page: spaces for
// underscores, units spelled ("cost_usd" is "cost (USD)").
func columnLabel(c string) string {
	for suffix, unit := range map[string]string{"_usd": " (USD)", "_ms": " (ms)", "_s": " (s)", "_pct": " (%)"} {
		if base, ok := strings.CutSuffix(c, suffix); ok && base != "" {
			return strings.ReplaceAll(base, "_", " ") + unit
		}
	}
	return strings.ReplaceAll(c, "_", " ")
}
