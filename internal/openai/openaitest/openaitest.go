// Package openaitest is a scriptable fake of the OpenAI Chat Completions API
// for tests and benchmarks: an httptest server that speaks the wire format
// the real openai-go client expects, JSON and SSE streaming, with tool
// calls, usage (cached prompt tokens included) and faults (delays that
// outlast a client's timeout, error statuses, malformed tool arguments…).
// It records every request it sees.
//
// Start with [New]: give it a [Responder] (or [FromModel] to let a
// tavern model such as the offline narrator answer over the wire) and queue
// scripted replies with [Server.Push]; point the client at [Server.URL].
// Only loopback is used.
package openaitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"tavern/internal/agent"
)

// Request is one Chat Completions request as the server saw it.
type Request struct {
	// N numbers the requests from 1.
	N      int
	Header http.Header
	// Body is the raw JSON body.
	Body         []byte
	Model        string
	Stream       bool
	IncludeUsage bool
	// System is the first message when it is a system message.
	System string
	// Messages are the messages after System, in agent form.
	Messages []agent.Message
	// Tools are the tool schemas; ToolsJSON their exact bytes on the wire.
	Tools     []agent.ToolSpec
	ToolsJSON []byte
	// Usage is what the server reported for it (zero for error replies).
	Usage agent.Usage
	// Response is the raw response body the server wrote (the SSE stream
	// when streaming), recorded when the handler returns.
	Response []byte
}

// Prefix is the stable part of the prompt: the system prompt and the tool
// schemas exactly as sent.
func (r Request) Prefix() string { return r.System + "\x00" + string(r.ToolsJSON) }

// ToolNames lists the tools offered, in order.
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// Reply is the server's answer to one request.
type Reply struct {
	// Status, if not 0 or 200, answers with an OpenAI error body.
	Status     int
	Error      string
	RetryAfter string // Retry-After header with an error status
	// Delay waits before answering (the request's cancellation ends it).
	Delay time.Duration
	// Content and ToolCalls make the assistant message.
	Content   string
	ToolCalls []agent.ToolCall
	// Usage, if set, replaces the computed usage.
	Usage *agent.Usage
	// ChunkSize is how many bytes of text each streamed delta carries
	// (default 8).
	ChunkSize int
	// ChunkDelay waits between streamed chunks (a model writing at its
	// own pace).
	ChunkDelay time.Duration
	// StallAfter, if > 0, makes a stream hang after that many text deltas
	// until the client gives up (a connection that dies mid-answer).
	StallAfter int
	// StreamError, if set, is sent inside a streamed answer (HTTP 200) as
	// an `error` chunk after ErrorAfter deltas, which ends it, as OpenAI
	// and others report a failure met mid-stream: {"error": {"message":
	// StreamError.Message, "type", "code"}}.
	StreamError *StreamError
	ErrorAfter  int
	// NoStreamTools makes a streamed answer carry its text but not its
	// tool calls, which only a request without `stream` gets: some
	// compatible servers do so.
	NoStreamTools bool
}

// StreamError is an error chunk inside a stream.
type StreamError struct {
	Message, Type string
	// Code is a string ("rate_limit_exceeded") or a number (429).
	Code any
}

// Responder answers a request that no scripted reply answers.
type Responder func(Request) Reply

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to configure a client with; it includes /v1.
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	reqs     []Request
	queue    []Reply
	fallback Responder
	// recent holds the canonical prompts of the last requests, to compute
	// cached tokens the way providers do (a shared prefix).
	recent []string
	nextID int
}

// New starts a server answering with fallback (nil answers a plain
// "ok" message) and closes it when tb ends.
func New(tb testing.TB, fallback Responder) *Server {
	s := &Server{fallback: fallback}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Push queues replies, answered in order before the fallback.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// SetFallback replaces the responder.
func (s *Server) SetFallback(r Responder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = r
}

// Requests returns a copy of every request seen so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Call builds a tool call; args is a JSON string or a value to marshal.
func Call(name string, args any) agent.ToolCall {
	var a string
	switch v := args.(type) {
	case string:
		a = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		a = string(b)
	}
	return agent.ToolCall{Type: "function", Function: agent.FunctionCall{Name: name, Arguments: a}}
}

// FromModel answers every request with m (the offline narrator plays the game
// over the wire). The agent is told from the tools offered.
func FromModel(m agent.Model) Responder {
	return func(r Request) Reply {
		req := agent.Request{Agent: "narrative", System: r.System, Messages: r.Messages, Tools: r.Tools}
		if slices.Contains(r.ToolNames(), "continue_combat") {
			req.Agent = "combat"
		}
		resp, err := m.Complete(context.Background(), req)
		if err != nil {
			return Reply{Status: http.StatusInternalServerError, Error: err.Error()}
		}
		return Reply{Content: resp.Message.Content, ToolCalls: resp.Message.ToolCalls}
	}
}

type wireMessage struct {
	Role       string           `json:"role"`
	Content    json.RawMessage  `json:"content"`
	ToolCalls  []agent.ToolCall `json:"tool_calls"`
	ToolCallID string           `json:"tool_call_id"`
}

type wireRequest struct {
	Model         string          `json:"model"`
	Messages      []wireMessage   `json:"messages"`
	Tools         json.RawMessage `json:"tools"`
	Stream        bool            `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "unknown path "+r.URL.Path, "")
		return
	}
	body, err := readAll(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "")
		return
	}
	rec := &recorder{ResponseWriter: w}
	w = rec
	defer func() {
		s.mu.Lock()
		if rec.n > 0 && rec.n <= len(s.reqs) {
			s.reqs[rec.n-1].Response = rec.buf.Bytes()
		}
		s.mu.Unlock()
	}()
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		writeError(w, http.StatusBadRequest, "bad JSON: "+err.Error(), "")
		return
	}
	req := Request{Header: r.Header.Clone(), Body: body, Model: wr.Model, Stream: wr.Stream,
		IncludeUsage: wr.StreamOptions.IncludeUsage, ToolsJSON: wr.Tools}
	for i, m := range wr.Messages {
		if i == 0 && m.Role == "system" {
			req.System = contentText(m.Content)
			continue
		}
		req.Messages = append(req.Messages, agent.Message{Role: m.Role, Content: contentText(m.Content), ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID})
	}
	var tools []struct {
		Function agent.ToolSpec `json:"function"`
	}
	if len(wr.Tools) > 0 {
		_ = json.Unmarshal(wr.Tools, &tools)
	}
	for _, t := range tools {
		req.Tools = append(req.Tools, t.Function)
	}

	s.mu.Lock()
	req.N = len(s.reqs) + 1
	rec.n = req.N
	s.reqs = append(s.reqs, req)
	var reply Reply
	scripted := len(s.queue) > 0
	if scripted {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	fallback := s.fallback
	s.mu.Unlock()
	if !scripted {
		if fallback != nil {
			reply = fallback(req)
		} else {
			reply = Reply{Content: "ok"}
		}
	}

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeError(w, reply.Status, reply.Error, reply.RetryAfter)
		return
	}
	u := s.usage(req, reply)
	usage := map[string]any{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens,
		"total_tokens":          u.PromptTokens + u.CompletionTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
	}
	s.mu.Lock()
	s.reqs[req.N-1].Usage = u
	s.nextID++
	id := fmt.Sprintf("chatcmpl-fake%d", s.nextID)
	s.mu.Unlock()
	for i := range reply.ToolCalls {
		if reply.ToolCalls[i].ID == "" {
			reply.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", req.N, i)
		}
		reply.ToolCalls[i].Type = "function"
	}
	if req.Stream {
		s.stream(w, r, req, reply, id, usage)
		return
	}
	finish := "stop"
	msg := map[string]any{"role": "assistant", "content": reply.Content}
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
		msg["tool_calls"] = reply.ToolCalls
		if reply.Content == "" {
			msg["content"] = nil
		}
	}
	writeJSON(w, map[string]any{
		"id": id, "object": "chat.completion", "created": 1767225600, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage,
	})
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, reply Reply, id string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fl, _ := w.(http.Flusher)
	deltas := 0
	send := func(v any) bool {
		if reply.StallAfter > 0 && deltas == reply.StallAfter {
			<-r.Context().Done()
			return false
		}
		if e := reply.StreamError; e != nil && deltas == reply.ErrorAfter {
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "code": e.Code}})
			_, _ = fmt.Fprintf(w, "data: %s\n\n", b)
			if fl != nil {
				fl.Flush()
			}
			return false
		}
		deltas++
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		if reply.ChunkDelay > 0 {
			select {
			case <-time.After(reply.ChunkDelay):
			case <-r.Context().Done():
			}
		}
		return r.Context().Err() == nil
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	size := reply.ChunkSize
	if size <= 0 {
		size = 8
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for _, piece := range split(reply.Content, size) {
		if !send(chunk(map[string]any{"content": piece}, nil)) {
			return
		}
	}
	calls := reply.ToolCalls
	if reply.NoStreamTools {
		calls = nil
	}
	for i, c := range calls {
		head := map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Function.Name, "arguments": ""}}
		if !send(chunk(map[string]any{"tool_calls": []any{head}}, nil)) {
			return
		}
		for _, piece := range split(c.Function.Arguments, size) {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if !send(chunk(map[string]any{"tool_calls": []any{d}}, nil)) {
				return
			}
		}
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	if req.IncludeUsage {
		if !send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{}, "usage": usage}) {
			return
		}
	}
	_, _ = fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// split cuts s into pieces of about n bytes, at rune boundaries.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// usage computes the reply's usage: about four bytes a token; cached
// tokens are the prefix shared with one of the last requests, counted as
// OpenAI does (nothing under 1024 tokens, then in steps of 128).
func (s *Server) usage(req Request, reply Reply) agent.Usage {
	var u agent.Usage
	if reply.Usage != nil {
		u = *reply.Usage
	} else {
		var b strings.Builder
		b.WriteString(string(req.ToolsJSON))
		b.WriteString(req.System)
		for _, m := range req.Messages {
			mb, _ := json.Marshal(m)
			b.Write(mb)
		}
		canon := b.String()
		s.mu.Lock()
		shared := 0
		for _, p := range s.recent {
			shared = max(shared, commonPrefix(p, canon))
		}
		s.recent = append(s.recent, canon)
		if len(s.recent) > 8 {
			s.recent = s.recent[1:]
		}
		s.mu.Unlock()
		u.PromptTokens = len(canon) / 4
		if cached := shared / 4; cached >= 1024 {
			u.CachedTokens = cached / 128 * 128
		}
		out := len(reply.Content)
		for _, c := range reply.ToolCalls {
			out += len(c.Function.Name) + len(c.Function.Arguments)
		}
		u.CompletionTokens = max(1, out/4)
	}
	return u
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func readAll(r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, 16<<20))
	return buf.Bytes(), err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg, retryAfter string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "fake_error", "code": strconv.Itoa(status), "param": nil}})
}

// recorder keeps a copy of what the handler writes.
type recorder struct {
	http.ResponseWriter
	buf bytes.Buffer
	n   int // the request's number
}

func (r *recorder) Write(p []byte) (int, error) {
	r.buf.Write(p)
	return r.ResponseWriter.Write(p)
}

// Flush implements http.Flusher, so streaming still flushes each event.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
