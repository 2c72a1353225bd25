package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"tavern/internal/dataset"
	"tavern/internal/engine"
)

// ListConversations returns the past conversations, most recent first
// (PROTOCOL.md "Operator, continued": GET /api/admin/ask), each with its
// first question.
func (a *DataAgent) ListConversations(ctx context.Context) ([]dataset.ConversationSummary, error) {
	cs, err := a.Conversations.AskConversations(ctx, 100)
	if err != nil {
		return nil, err
	}
	out := make([]dataset.ConversationSummary, len(cs))
	for i, c := range cs {
		var m Message
		_ = json.Unmarshal(c.First, &m)
		out[i] = dataset.ConversationSummary{Conversation: c.ID, StartedAt: c.StartedAt, UpdatedAt: c.UpdatedAt, Questions: c.Questions, First: m.Content}
	}
	return out, nil
}

// ConversationTurns returns conversation id's questions, each with its
// answer and the SQL that ran for it (GET /api/admin/ask/{conversation}).
// ENOTFOUND if there is no such conversation.
func (a *DataAgent) ConversationTurns(ctx context.Context, id string) ([]dataset.ConversationTurn, error) {
	if id == "" || len(id) > 64 {
		return nil, engine.Errorf(engine.ENOTFOUND, "There is no conversation %q.", id)
	}
	rows, err := a.Conversations.Conversation(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []dataset.ConversationTurn
	for _, m := range DecodeMessages(rows) {
		if len(out) == 0 || out[len(out)-1].Turn != m.Turn {
			out = append(out, dataset.ConversationTurn{Turn: m.Turn, SQL: []string{}})
		}
		t := &out[len(out)-1]
		switch m.Role {
		case "user":
			if t.Question == "" {
				t.Question = m.Content
			}
		case "assistant":
			for _, c := range m.ToolCalls {
				var args struct {
					SQL  string `json:"sql"`
					Text string `json:"text"`
				}
				if json.Unmarshal([]byte(c.Function.Arguments), &args) != nil {
					continue
				}
				switch c.Function.Name {
				case "query_data":
					if args.SQL != "" {
						t.SQL = append(t.SQL, args.SQL)
					}
				case "answer":
					t.Answer = args.Text
				}
			}
			if s := strings.TrimSpace(m.Content); s != "" {
				t.Answer = s
			}
		}
	}
	if out == nil {
		return nil, errors.New("conversation " + id + " has no messages")
	}
	return out, nil
}

// AskTurn is what the call log records as the turn of the data agent's
// model calls for question turn of conversation: the conversation's id,
// "/" and the question's number (the table agents' calls record "t12").
func AskTurn(conversation string, turn int) string {
	return conversation + "/" + strconv.Itoa(turn)
}

// ConversationMessages returns every message of conversation id as
// stored, oldest first, in the Chat Completions format (the export
// history_data.jsonl). ENOTFOUND if there is no such conversation.
func (a *DataAgent) ConversationMessages(ctx context.Context, id string) ([]json.RawMessage, error) {
	if id == "" || len(id) > 64 {
		return nil, engine.Errorf(engine.ENOTFOUND, "There is no conversation %q.", id)
	}
	rows, err := a.Conversations.Conversation(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, engine.Errorf(engine.ENOTFOUND, "There is no conversation %q.", id)
	}
	out := make([]json.RawMessage, len(rows))
	for i, r := range rows {
		out[i] = r.Body
	}
	return out, nil
}
