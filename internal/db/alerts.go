package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// OldestOpenActions returns, for each table with an open (acknowledged,
// unresolved) action, when its oldest one was acknowledged: what the
// operator's action-waiting alert reads.
func (d *DB) OldestOpenActions(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := each(ctx, d.reader, `SELECT table_id, MIN(created_at) FROM pending_actions WHERE status = 'pending' GROUP BY table_id`, nil,
		func(r *sql.Rows) error {
			var id, at string
			if err := r.Scan(&id, &at); err != nil {
				return err
			}
			t, err := parseTime(at)
			if err != nil {
				return fmt.Errorf("table %s: %w", id, err)
			}
			out[id] = t
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("oldest open actions: %w", err)
	}
	return out, nil
}
