package db

import (
	"context"
	"database/sql"
	"fmt"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Conversation returns the messages of the data agent's conversation id,
// oldest first, each with its turn (store.AgentMessage.Agent is "data"),
// or an ENOTFOUND *engine.Error if there is none. It implements the agent
// package's Conversations; safe for concurrent use.
func (d *DB) Conversation(ctx context.Context, id string) ([]store.AgentMessage, error) {
	var out []store.AgentMessage
	err := each(ctx, d.reader, "SELECT turn, body FROM ask_messages WHERE conversation = ? ORDER BY id", []any{id}, func(r *sql.Rows) error {
		m := store.AgentMessage{Agent: "data"}
		var body string
		if err := r.Scan(&m.Turn, &body); err != nil {
			return err
		}
		m.Body = []byte(body)
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, engine.Errorf(engine.ENOTFOUND, "There is no conversation %q; ask without one to start a new conversation.", id)
	}
	return out, nil
}

// AppendConversation adds msgs to the data agent's conversation id (which
// it creates if needed) in one transaction. It implements the agent
// package's Conversations; safe for concurrent use.
func (d *DB) AppendConversation(ctx context.Context, id string, msgs []store.AgentMessage) error {
	now := formatTime(d.now())
	err := d.write(ctx, func(w *writeTx) error {
		for _, m := range msgs {
			if _, err := w.conn.ExecContext(ctx, "INSERT INTO ask_messages (conversation, turn, body, created_at) VALUES (?, ?, ?, ?)",
				id, m.Turn, string(m.Body), now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("append to conversation %s: %w", id, err)
	}
	return nil
}
