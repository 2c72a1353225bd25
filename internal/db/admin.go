package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"tavern/internal/store"
)

// The operator's side of the store: the pending actions'
// lifecycle, the paused and closed marks on tables, and the call log read
// over a time window.

// SetActionState records where an open pending action is in its life
// (store.ActionPending, ActionRunning or ActionFailed), how many attempts
// failed and the last error, and returns once it is durable (a group
// commit). A closed or unknown action is left alone: a late update never
// reopens what a commit resolved. Safe for concurrent use. QueueActionState
// does the same without waiting.
func (d *DB) SetActionState(ctx context.Context, tableID string, a store.ActionLife) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, Lives: []store.ActionLife{a}})
}

// ActionStates returns the life of every open pending action of a table,
// by action id.
func (d *DB) ActionStates(ctx context.Context, tableID string) (map[string]store.ActionLife, error) {
	out := map[string]store.ActionLife{}
	err := each(ctx, d.reader, `SELECT id, state, attempts, last_error FROM pending_actions
		WHERE table_id = ? AND status = 'pending'`, []any{tableID}, func(r *sql.Rows) error {
		var a store.ActionLife
		if err := r.Scan(&a.ActionID, &a.State, &a.Attempts, &a.Error); err != nil {
			return err
		}
		out[a.ActionID] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("action states of %s: %w", tableID, err)
	}
	return out, nil
}

// SetTablePaused marks a table paused or not; the mark survives restarts.
// ENOTFOUND if there is no such table. The hub commits the mark with its
// audit event instead (store.Commit.Paused).
func (d *DB) SetTablePaused(ctx context.Context, tableID string, paused bool) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, Paused: &paused})
}

// CloseTable marks a table closed at at. Its rows stay: the history is kept
// read-only. ENOTFOUND if there is no such table. The hub commits the mark
// with its audit event instead (store.Commit.ClosedAt).
func (d *DB) CloseTable(ctx context.Context, tableID string, at time.Time) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, ClosedAt: &at})
}

const (
	qSetTablePaused = "UPDATE tables SET paused = ? WHERE id = ?"
	qCloseTable     = "UPDATE tables SET closed_at = ? WHERE id = ?"
)

// setTableMarks writes a commit's operator marks (store.Commit.Paused and
// ClosedAt).
func setTableMarks(w *writeTx, c store.Commit) error {
	if c.Paused != nil {
		if err := updateTable(w, c.TableID, qSetTablePaused, *c.Paused, c.TableID); err != nil {
			return fmt.Errorf("set paused mark: %w", err)
		}
	}
	if c.ClosedAt != nil {
		if err := updateTable(w, c.TableID, qCloseTable, formatTime(*c.ClosedAt), c.TableID); err != nil {
			return fmt.Errorf("set closed mark: %w", err)
		}
	}
	return nil
}

// updateTable runs q, which updates table tableID's row; ENOTFOUND if
// there is no such row.
func updateTable(w *writeTx, tableID, q string, args ...any) error {
	res, err := w.exec(q, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return tableNotFound(tableID)
	}
	return nil
}

// TableFlags returns the operator's marks of every table, by table id.
func (d *DB) TableFlags(ctx context.Context) (map[string]store.TableFlags, error) {
	out := map[string]store.TableFlags{}
	err := each(ctx, d.reader, "SELECT id, paused, COALESCE(closed_at, '') FROM tables", nil, func(r *sql.Rows) error {
		var id, closed string
		var f store.TableFlags
		if err := r.Scan(&id, &f.Paused, &closed); err != nil {
			return err
		}
		if closed != "" {
			t, err := parseTime(closed)
			if err != nil {
				return fmt.Errorf("table %s: closed_at: %w", id, err)
			}
			f.Closed, f.ClosedAt = true, t
		}
		out[id] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table flags: %w", err)
	}
	return out, nil
}

// CallsSince returns every model call started at or after since, of one
// table or of all when tableID is "", oldest first, at most limit (<= 0:
// 100,000, the newest kept).
func (d *DB) CallsSince(ctx context.Context, since time.Time, tableID string, limit int) ([]store.LLMCall, error) {
	if limit <= 0 {
		limit = 100_000
	}
	var out []store.LLMCall
	err := each(ctx, d.reader, `SELECT `+callCols+` FROM (SELECT * FROM llm_calls
		WHERE started_at >= ? AND (? = '' OR table_id = ?) ORDER BY started_at DESC, id DESC LIMIT ?) ORDER BY started_at, id`,
		[]any{formatTime(since), tableID, tableID, limit}, func(r *sql.Rows) error {
			c, err := scanCall(r)
			out = append(out, c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("calls since %s: %w", since.Format(time.RFC3339), err)
	}
	return out, nil
}

// TurnTimes returns when each DM turn started narrating since since, over
// every table, oldest first: the first narration event of each (table,
// turn), the session intro (t0) left out.
func (d *DB) TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error) {
	var out []time.Time
	err := each(ctx, d.reader, `SELECT MIN(ts) FROM events WHERE kind = 'narration' AND ts >= ? AND turn NOT IN ('', 't0')
		GROUP BY table_id, turn ORDER BY 1`, []any{formatTime(since)}, func(r *sql.Rows) error {
		var s string
		if err := r.Scan(&s); err != nil {
			return err
		}
		t, err := parseTime(s)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("turn times: %w", err)
	}
	return out, nil
}
