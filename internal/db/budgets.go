package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"tavern/internal/store"
)

// The operator's budgets: each table's own daily model budget, and what
// the call log says was spent by day and table.

// SetTableBudget sets table tableID's daily model budget (0 removes it),
// recording by, who set it. ENOTFOUND if there is no such table.
func (d *DB) SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error {
	now := formatTime(d.now())
	err := d.write(ctx, func(w *writeTx) error {
		var one int
		if err := w.conn.QueryRowContext(ctx, "SELECT 1 FROM tables WHERE id = ?", tableID).Scan(&one); err != nil {
			if err == sql.ErrNoRows {
				return tableNotFound(tableID)
			}
			return err
		}
		if usd <= 0 {
			_, err := w.conn.ExecContext(ctx, "DELETE FROM table_budgets WHERE table_id = ?", tableID)
			return err
		}
		_, err := w.conn.ExecContext(ctx, `INSERT INTO table_budgets (table_id, usd_per_day, set_by, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (table_id) DO UPDATE SET usd_per_day = excluded.usd_per_day, set_by = excluded.set_by, updated_at = excluded.updated_at`,
			tableID, usd, by, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("set budget of %s: %w", tableID, err)
	}
	return nil
}

// TableBudgets returns every table's own daily budget.
func (d *DB) TableBudgets(ctx context.Context) ([]store.TableBudget, error) {
	var out []store.TableBudget
	err := each(ctx, d.reader, "SELECT table_id, usd_per_day, set_by FROM table_budgets ORDER BY table_id", nil, func(r *sql.Rows) error {
		var b store.TableBudget
		if err := r.Scan(&b.TableID, &b.USDPerDay, &b.SetBy); err != nil {
			return err
		}
		out = append(out, b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table budgets: %w", err)
	}
	return out, nil
}

// SpendSince returns the model spend of every UTC day from since's day on,
// by day and table: newest day first, then the most spent.
func (d *DB) SpendSince(ctx context.Context, since time.Time) ([]store.Spend, error) {
	day := since.UTC().Truncate(24 * time.Hour)
	var out []store.Spend
	err := each(ctx, d.reader, `SELECT substr(started_at, 1, 10) AS day, table_id, COUNT(*), COALESCE(SUM(cost_usd), 0)
		FROM llm_calls WHERE started_at >= ? GROUP BY day, table_id ORDER BY day DESC, 4 DESC, table_id`,
		[]any{formatTime(day)}, func(r *sql.Rows) error {
			var s store.Spend
			if err := r.Scan(&s.Day, &s.TableID, &s.Calls, &s.USD); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("spend since %s: %w", day.Format(time.DateOnly), err)
	}
	return out, nil
}
