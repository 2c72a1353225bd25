package db

import (
	"context"
	"database/sql"
	"fmt"

	"tavern/internal/store"
)

// AskConversations returns the data agent's conversations, the most
// recently used first, at most limit (<= 0: 100).
func (d *DB) AskConversations(ctx context.Context, limit int) ([]store.AskConversation, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []store.AskConversation{}
	err := each(ctx, d.reader, `SELECT conversation, min(created_at), max(created_at), count(DISTINCT turn),
			(SELECT f.body FROM ask_messages f WHERE f.conversation = m.conversation ORDER BY f.id LIMIT 1)
		FROM ask_messages m GROUP BY conversation ORDER BY max(id) DESC LIMIT ?`, []any{limit}, func(r *sql.Rows) error {
		var c store.AskConversation
		var started, updated, first string
		if err := r.Scan(&c.ID, &started, &updated, &c.Questions, &first); err != nil {
			return err
		}
		var err error
		if c.StartedAt, err = parseTime(started); err != nil {
			return err
		}
		if c.UpdatedAt, err = parseTime(updated); err != nil {
			return err
		}
		c.First = []byte(first)
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ask conversations: %w", err)
	}
	return out, nil
}
