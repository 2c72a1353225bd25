package pgdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The operator, continued (PROTOCOL.md "Operator, continued"): the open
// actions the alerts watch, the Ask conversations' list, the tables' own
// budgets and the spend, and the console's named users; the twins of
// internal/db's alerts.go, ask_list.go, budgets.go and console_users.go.

// OldestOpenActions returns, for each table with an open (acknowledged,
// unresolved) action, when its oldest one was acknowledged: what the
// operator's action-waiting alert reads.
func (d *DB) OldestOpenActions(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := each(ctx, d.pool, "SELECT table_id, MIN(created_at) FROM pending_actions WHERE status = 'pending' GROUP BY table_id", nil,
		func(r pgx.Rows) error {
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

// AskConversations returns the data agent's conversations, the most
// recently used first, at most limit (<= 0: 100).
func (d *DB) AskConversations(ctx context.Context, limit int) ([]store.AskConversation, error) {
	if limit <= 0 {
		limit = 100
	}
	out := []store.AskConversation{}
	err := each(ctx, d.pool, `SELECT conversation, min(created_at), max(created_at), count(DISTINCT turn),
			(SELECT f.body FROM ask_messages f WHERE f.conversation = m.conversation ORDER BY f.id LIMIT 1)
		FROM ask_messages m GROUP BY conversation ORDER BY max(id) DESC LIMIT $1`, []any{limit}, func(r pgx.Rows) error {
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

// SetTableBudget sets table tableID's daily model budget (0 removes it),
// recording by, who set it. ENOTFOUND if there is no such table.
func (d *DB) SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error {
	now := formatTime(d.now())
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM tables WHERE id = $1)", tableID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return tableNotFound(tableID)
		}
		if usd <= 0 {
			_, err := tx.Exec(ctx, "DELETE FROM table_budgets WHERE table_id = $1", tableID)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO table_budgets (table_id, usd_per_day, set_by, updated_at) VALUES ($1, $2, $3, $4)
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
	err := each(ctx, d.pool, "SELECT table_id, usd_per_day, set_by FROM table_budgets ORDER BY table_id", nil, func(r pgx.Rows) error {
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
	err := each(ctx, d.pool, `SELECT substr(started_at, 1, 10) AS day, table_id, COUNT(*), COALESCE(SUM(cost_usd), 0)
		FROM llm_calls WHERE started_at >= $1 GROUP BY day, table_id ORDER BY day DESC, 4 DESC, table_id`,
		[]any{formatTime(day)}, func(r pgx.Rows) error {
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

// CreateConsoleUser stores u with the hash of its token. ECONFLICT if the
// id or the hash is taken.
func (d *DB) CreateConsoleUser(ctx context.Context, u store.ConsoleUser, tokenHash []byte) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO console_users (id, name, role, token_hash, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		u.ID, u.Name, u.Role, tokenHash, u.CreatedBy, formatTime(u.CreatedAt))
	if isUnique(err) {
		err = engine.Errorf(engine.ECONFLICT, "console user %s already exists", u.ID)
	}
	if err != nil {
		return fmt.Errorf("create console user %s: %w", u.Name, err)
	}
	return nil
}

const consoleUserCols = "id, name, role, created_by, created_at, revoked_at"

func scanConsoleUser(r pgx.Row) (store.ConsoleUser, error) {
	var u store.ConsoleUser
	var created string
	var revoked *string
	if err := r.Scan(&u.ID, &u.Name, &u.Role, &u.CreatedBy, &created, &revoked); err != nil {
		return u, err
	}
	var err error
	if u.CreatedAt, err = parseTime(created); err != nil {
		return u, err
	}
	if revoked != nil {
		t, err := parseTime(*revoked)
		if err != nil {
			return u, err
		}
		u.RevokedAt = &t
	}
	return u, nil
}

// ConsoleUsers returns every console user, revoked ones included, newest
// first.
func (d *DB) ConsoleUsers(ctx context.Context) ([]store.ConsoleUser, error) {
	out := []store.ConsoleUser{}
	err := each(ctx, d.pool, "SELECT "+consoleUserCols+" FROM console_users ORDER BY created_at DESC, id", nil, func(r pgx.Rows) error {
		u, err := scanConsoleUser(r)
		out = append(out, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("console users: %w", err)
	}
	return out, nil
}

// ConsoleUserByTokenHash returns the console user whose token hashes to
// hash and is not revoked, or an ENOTFOUND *engine.Error.
func (d *DB) ConsoleUserByTokenHash(ctx context.Context, hash []byte) (store.ConsoleUser, error) {
	u, err := scanConsoleUser(d.pool.QueryRow(ctx, "SELECT "+consoleUserCols+" FROM console_users WHERE token_hash = $1 AND revoked_at IS NULL", hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return u, engine.Errorf(engine.ENOTFOUND, "no console user has this token")
	}
	if err != nil {
		return u, fmt.Errorf("console user by token: %w", err)
	}
	return u, nil
}

// RevokeConsoleUser revokes console user id's token. ENOTFOUND if there is
// no such user; revoking twice keeps the first time.
func (d *DB) RevokeConsoleUser(ctx context.Context, id string) error {
	ct, err := d.pool.Exec(ctx, "UPDATE console_users SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2", formatTime(d.now()), id)
	if err == nil && ct.RowsAffected() == 0 {
		err = engine.Errorf(engine.ENOTFOUND, "No console user %s.", id)
	}
	if err != nil {
		return fmt.Errorf("revoke console user %s: %w", id, err)
	}
	return nil
}
