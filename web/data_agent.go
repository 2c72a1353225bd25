package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tavern/internal/agent"
	"tavern/internal/dataset"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// The data agent's own history, for the operator's session browser: the
// table agents' histories are per table, the data agent's is the Ask
// conversations of the whole server, each question with its SQL, its
// answer and its model calls.

// DataConversation is one Ask conversation in the data agent's history.
type DataConversation struct {
	dataset.ConversationSummary
	Turns []DataTurn `json:"turns"`
}

// DataTurn is one question of a conversation and the model calls made
// for it (none when the offline analyst answered without a model).
type DataTurn struct {
	dataset.ConversationTurn
	Calls []store.LLMCall `json:"calls"`
}

// conversationExport is the part of the data agent that exports a
// conversation's messages (agent.DataAgent).
type conversationExport interface {
	ConversationMessages(ctx context.Context, id string) ([]json.RawMessage, error)
}

// Bounds of the data agent's history view: the most recent
// conversations first.
const (
	dataHistoryDefault = 20
	dataHistoryMax     = 100
	// askCallsBefore bounds how long a question takes, from its first
	// model call to its stored answer (agent.DataAgent's Timeout, 2
	// minutes by default, with room).
	askCallsBefore = 15 * time.Minute
)

func (s *Server) dataAgentRoutes(hf func(pattern string, h http.HandlerFunc), a func(http.HandlerFunc) http.HandlerFunc) {
	hf("GET /admin/agents/data", a(s.dataAgentPage))
	hf("GET /api/admin/agents/data/history", a(s.apiDataAgentHistory))
	hf("GET /api/admin/ask/{conversation}/export/{file}", a(s.apiAskExport))
}

// dataAgentHistory returns the last limit conversations, newest first,
// each with its questions and their model calls.
func (s *Server) dataAgentHistory(ctx context.Context, limit int) ([]DataConversation, error) {
	out := []DataConversation{}
	list, err := s.ask.ListConversations(ctx)
	if err != nil {
		return nil, err
	}
	if len(list) > limit {
		list = list[:limit]
	}
	if len(list) == 0 {
		return out, nil
	}
	since := list[0].StartedAt
	for _, c := range list {
		if c.StartedAt.Before(since) {
			since = c.StartedAt
		}
	}
	// A question's messages are stored once it is answered, after its
	// calls: read the calls from before the oldest.
	all, err := s.admin.LLMCalls(ctx, since.Add(-askCallsBefore))
	if err != nil {
		return nil, err
	}
	byTurn := map[string][]store.LLMCall{}
	for _, c := range all {
		if c.Agent == agent.AgentData && c.TableID == "" {
			byTurn[c.Turn] = append(byTurn[c.Turn], c)
		}
	}
	for _, c := range list {
		turns, err := s.ask.ConversationTurns(ctx, c.Conversation)
		if err != nil {
			return nil, err
		}
		dc := DataConversation{ConversationSummary: c, Turns: make([]DataTurn, len(turns))}
		for i, t := range turns {
			calls := byTurn[agent.AskTurn(c.Conversation, t.Turn)]
			if calls == nil {
				calls = []store.LLMCall{}
			}
			dc.Turns[i] = DataTurn{ConversationTurn: t, Calls: calls}
		}
		out = append(out, dc)
	}
	return out, nil
}

// historyLimit reads ?limit= (default dataHistoryDefault, at most
// dataHistoryMax).
func historyLimit(r *http.Request) (int, error) {
	q := r.URL.Query().Get("limit")
	if q == "" {
		return dataHistoryDefault, nil
	}
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > dataHistoryMax {
		return 0, badRequest("limit: want a number of conversations from 1 to 100.")
	}
	return n, nil
}

// apiDataAgentHistory is GET /api/admin/agents/data/history?limit= →
// {"agent": "data", "conversations": [DataConversation]}.
func (s *Server) apiDataAgentHistory(w http.ResponseWriter, r *http.Request) {
	n, err := historyLimit(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	cs, err := s.dataAgentHistory(r.Context(), n)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"agent": agent.AgentData, "conversations": cs})
}

// dataAgentPage is GET /admin/agents/data: the data agent's place in the
// session browser.
func (s *Server) dataAgentPage(w http.ResponseWriter, r *http.Request) {
	n, err := historyLimit(r)
	if err != nil {
		n = dataHistoryDefault
	}
	cs, err := s.dataAgentHistory(r.Context(), n)
	if err != nil {
		s.adminFail(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, dataAgentPage(cs, s.ask != nil))
}

// dataExportFile is the one export of a conversation, named like the
// table agents' (history_<agent>.jsonl).
var dataExportFile = "history_" + agent.AgentData + ".jsonl"

// apiAskExport is GET /api/admin/ask/{conversation}/export/history_data.jsonl:
// the conversation's messages, one Chat Completions message a line.
func (s *Server) apiAskExport(w http.ResponseWriter, r *http.Request) {
	id, file := r.PathValue("conversation"), r.PathValue("file")
	ex, ok := s.ask.(conversationExport)
	if file != dataExportFile || !ok {
		s.error(w, r, &apiError{status: http.StatusNotFound, code: hub.CodeNotFound, message: "Exports: " + dataExportFile + "."})
		return
	}
	lines, err := ex.ConversationMessages(r.Context(), id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.log.Info("history exported", "agent", agent.AgentData, "conversation", id, "by", actorName(r.Context()))
	s.writeJSONL(w, r, file, lines)
}

// turnLink is where a model call's turn is shown: a table's session
// browser, or the data agent's history for its calls.
func turnLink(c store.LLMCall) string {
	if c.TableID == "" && c.Agent == agent.AgentData {
		// The data agent's calls name their conversation's question
		// (agent.AskTurn); its history is not per table.
		conv, _, _ := strings.Cut(c.Turn, "/")
		return "/admin/agents/data#" + conv
	}
	u := "/admin/tables/" + c.TableID + "?agent=" + c.Agent
	if c.Turn != "" {
		u += "#" + c.Turn
	}
	return u
}
