package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"tavern/internal/store"
)

// RaiseAlert records an alert raised. An alert id already open (raised,
// not cleared) is left as it is, so a restart or a second node does not
// raise it twice. The history is trimmed to its bounds
// (store.AlertHistoryMax rows, store.AlertHistoryAge) in the same write.
func (d *DB) RaiseAlert(ctx context.Context, r store.AlertRecord) error {
	err := d.write(ctx, func(w *writeTx) error {
		if _, err := w.conn.ExecContext(ctx, `INSERT INTO alert_history (alert_id, rule, severity, summary, value, threshold, table_id, raised_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
			r.AlertID, r.Rule, r.Severity, r.Summary, r.Value, r.Threshold, r.TableID, formatTime(r.RaisedAt)); err != nil {
			return err
		}
		_, err := w.conn.ExecContext(ctx, `DELETE FROM alert_history WHERE raised_at < ?
			OR id <= (SELECT id FROM alert_history ORDER BY id DESC LIMIT 1 OFFSET ?)`,
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
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.conn.ExecContext(ctx, "UPDATE alert_history SET cleared_at = ? WHERE alert_id = ? AND cleared_at IS NULL", formatTime(at), alertID)
		return err
	})
	if err != nil {
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
	err := each(ctx, d.reader, `SELECT alert_id, rule, severity, summary, value, threshold, table_id, raised_at, cleared_at
		FROM alert_history ORDER BY id DESC LIMIT ?`, []any{limit}, func(rows *sql.Rows) error {
		var r store.AlertRecord
		var raised string
		var cleared sql.NullString
		if err := rows.Scan(&r.AlertID, &r.Rule, &r.Severity, &r.Summary, &r.Value, &r.Threshold, &r.TableID, &raised, &cleared); err != nil {
			return err
		}
		var err error
		if r.RaisedAt, err = parseTime(raised); err != nil {
			return err
		}
		if cleared.Valid {
			c, err := parseTime(cleared.String)
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
