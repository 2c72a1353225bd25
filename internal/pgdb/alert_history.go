package pgdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/internal/store"
)

// The operator's alert history: the twin of internal/db's
// alert_history.go.

// RaiseAlert records an alert raised. An alert id already open (raised,
// not cleared) is left as it is, so a restart or another node does not
// raise it twice. The history is trimmed to its bounds
// (store.AlertHistoryMax rows, store.AlertHistoryAge) in the same
// transaction.
func (d *DB) RaiseAlert(ctx context.Context, r store.AlertRecord) error {
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO alert_history (alert_id, rule, severity, summary, value, threshold, table_id, raised_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
			r.AlertID, r.Rule, r.Severity, r.Summary, r.Value, r.Threshold, r.TableID, formatTime(r.RaisedAt)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM alert_history WHERE raised_at < $1
			OR id <= (SELECT id FROM alert_history ORDER BY id DESC LIMIT 1 OFFSET $2)`,
			formatTime(d.now().Add(-store.AlertHistoryAge)), store.AlertHistoryMax)
		return err
	})
	if err != nil {
		return fmt.Errorf("raise alert %s: %w", r.AlertID, err)
	}
	return nil
}

// ClearAlert records that the open alert alertID cleared at at; nothing
// if it is not open.
func (d *DB) ClearAlert(ctx context.Context, alertID string, at time.Time) error {
	if _, err := d.pool.Exec(ctx, "UPDATE alert_history SET cleared_at = $1 WHERE alert_id = $2 AND cleared_at IS NULL", formatTime(at), alertID); err != nil {
		return fmt.Errorf("clear alert %s: %w", alertID, err)
	}
	return nil
}

// AlertHistory returns the alerts raised, newest first, at most limit
// (<= 0: all kept).
func (d *DB) AlertHistory(ctx context.Context, limit int) ([]store.AlertRecord, error) {
	if limit <= 0 {
		limit = store.AlertHistoryMax
	}
	out := []store.AlertRecord{}
	err := each(ctx, d.pool, `SELECT alert_id, rule, severity, summary, value, threshold, table_id, raised_at, cleared_at
		FROM alert_history ORDER BY id DESC LIMIT $1`, []any{limit}, func(rows pgx.Rows) error {
		var r store.AlertRecord
		var raised string
		var cleared *string
		if err := rows.Scan(&r.AlertID, &r.Rule, &r.Severity, &r.Summary, &r.Value, &r.Threshold, &r.TableID, &raised, &cleared); err != nil {
			return err
		}
		var err error
		if r.RaisedAt, err = parseTime(raised); err != nil {
			return err
		}
		if cleared != nil {
			c, err := parseTime(*cleared)
			if err != nil {
				return err
			}
			r.ClearedAt = &c
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("alert history: %w", err)
	}
	return out, nil
}
