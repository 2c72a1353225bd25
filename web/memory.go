package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// memoryHub is the part of *hub.Hub behind the DM's records: the
// long-term memory (seed 001), the history exports and the model call
// log. Every method is for the table's owner only (EFORBIDDEN otherwise):
// these records hold what players must not see, such as NPC secrets.
type memoryHub interface {
	Memories(ctx context.Context, tableID, playerID string) ([]store.Memory, error)
	SearchMemories(ctx context.Context, tableID, playerID, query string, limit int) ([]store.Memory, error)
	MemorySession(ctx context.Context, tableID, playerID string, id int64) (hub.Session, error)
	SummarizeSession(ctx context.Context, tableID, playerID string, id int64) (store.Memory, error)
	ExportHistory(ctx context.Context, tableID, playerID, agentName string) ([]json.RawMessage, error)
	Calls(ctx context.Context, tableID, playerID string, limit int) ([]store.LLMCall, error)
}

// memories returns the hub's memory side, or writes 503 if it has none
// (a test fake).
func (s *Server) memories(w http.ResponseWriter, r *http.Request) (memoryHub, string, bool) {
	id, err := tableID(r)
	if err != nil {
		s.error(w, r, err)
		return nil, "", false
	}
	mh, ok := s.hub.(memoryHub)
	if !ok {
		s.error(w, r, &apiError{status: http.StatusServiceUnavailable, code: hub.CodeUnavailable, message: "Memories are not available."})
		return nil, "", false
	}
	return mh, id, true
}

func sessionID(r *http.Request) (int64, error) {
	n, err := strconv.ParseInt(r.PathValue("session"), 10, 64)
	if err != nil || n <= 0 {
		return 0, &apiError{status: http.StatusNotFound, code: hub.CodeNotFound, message: "No such session."}
	}
	return n, nil
}

type memoriesResponse struct {
	Memories []store.Memory `json:"memories"`
}

// listMemories: GET /api/tables/{id}/memories → {"memories": [Memory]},
// oldest first.
func (s *Server) listMemories(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	ms, err := mh.Memories(r.Context(), id, p.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoriesResponse{Memories: nonNil(ms)})
}

// searchMemories: GET /api/tables/{id}/memories/search?q=…&limit=… →
// {"memories": [Memory]}, best match first.
func (s *Server) searchMemories(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if q == "" || len(q) > 200 {
		s.error(w, r, badRequest("q must hold 1 to 200 characters."))
		return
	}
	limit, err := intParam(r.URL.Query().Get("limit"), 10, 1, 50)
	if err != nil {
		s.error(w, r, badRequest("limit must be between 1 and 50."))
		return
	}
	ms, err := mh.SearchMemories(r.Context(), id, p.ID, q, int(limit))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoriesResponse{Memories: nonNil(ms)})
}

// getSession: GET /api/tables/{id}/memories/{session} → {"memory",
// "messages" (OpenAI format), "transcript"}.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	sid, err := sessionID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	sess, err := mh.MemorySession(r.Context(), id, p.ID, sid)
	if err != nil {
		s.error(w, r, err)
		return
	}
	sess.Messages = nonNil(sess.Messages)
	writeJSON(w, http.StatusOK, sess)
}

// summarizeSession: POST /api/tables/{id}/memories/{session}/summarize →
// the Memory with its new title, summary and keywords.
func (s *Server) summarizeSession(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	sid, err := sessionID(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	m, err := mh.SummarizeSession(r.Context(), id, p.ID, sid)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// exportHistory: GET /api/tables/{id}/export/history_narrative.jsonl (or
// history_combat.jsonl) → one OpenAI-format chat message per line, the
// whole history of that agent, archived messages included.
func (s *Server) exportHistory(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	file := r.PathValue("file")
	agentName, err := exportAgent(file)
	if err != nil {
		s.error(w, r, err)
		return
	}
	lines, err := mh.ExportHistory(r.Context(), id, p.ID, agentName)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.writeJSONL(w, r, file, lines)
}

// errNoExport answers an export file that is none of exportAgents'.
var errNoExport = &apiError{status: http.StatusNotFound, code: hub.CodeNotFound, message: "Exports: history_narrative.jsonl, history_combat.jsonl."}

// exportAgent returns the agent an export's file name names,
// history_<agent>.jsonl, or errNoExport.
func exportAgent(file string) (string, error) {
	name, ok := strings.CutSuffix(file, ".jsonl")
	if ok {
		name, ok = strings.CutPrefix(name, "history_")
	}
	if !ok || !slices.Contains(exportAgents, name) {
		return "", errNoExport
	}
	return name, nil
}

// writeJSONL answers lines as the file name, one JSON value a line.
func (s *Server) writeJSONL(w http.ResponseWriter, r *http.Request, file string, lines []json.RawMessage) {
	var buf bytes.Buffer
	for _, l := range lines {
		// Compact re-encodes each stored message on one line whatever its
		// stored spacing.
		if err := json.Compact(&buf, l); err != nil {
			s.error(w, r, fmt.Errorf("export %s: %w", file, err))
			return
		}
		buf.WriteByte('\n')
	}
	w.Header().Set("Content-Type", "application/jsonl; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

type callsResponse struct {
	Calls []store.LLMCall `json:"calls"`
}

// listCalls: GET /api/tables/{id}/calls?limit=… → {"calls": [Call]},
// newest first: model, latency, tokens, estimated cost, error.
func (s *Server) listCalls(w http.ResponseWriter, r *http.Request, p engine.Player) {
	mh, id, ok := s.memories(w, r)
	if !ok {
		return
	}
	limit, err := intParam(r.URL.Query().Get("limit"), defaultLimit, 1, maxLimit)
	if err != nil {
		s.error(w, r, badRequest(fmt.Sprintf("limit must be between 1 and %d.", maxLimit)))
		return
	}
	cs, err := mh.Calls(r.Context(), id, p.ID, int(limit))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, callsResponse{Calls: nonNil(cs)})
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
