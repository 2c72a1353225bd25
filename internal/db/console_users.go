package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The console's named users (PROTOCOL.md "Operator, continued"): each a
// token's SHA-256 with a name and a role. Revoking keeps the row, so the
// names in the audit trail stay readable.

// CreateConsoleUser stores u with the hash of its token. ECONFLICT if the
// id or the hash is taken.
func (d *DB) CreateConsoleUser(ctx context.Context, u store.ConsoleUser, tokenHash []byte) error {
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.conn.ExecContext(ctx, `INSERT INTO console_users (id, name, role, token_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			u.ID, u.Name, u.Role, tokenHash, u.CreatedBy, formatTime(u.CreatedAt))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "console user %s already exists", u.ID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create console user %s: %w", u.Name, err)
	}
	return nil
}

const consoleUserCols = "id, name, role, created_by, created_at, revoked_at"

func scanConsoleUser(r rowScanner) (store.ConsoleUser, error) {
	var u store.ConsoleUser
	var created string
	var revoked sql.NullString
	if err := r.Scan(&u.ID, &u.Name, &u.Role, &u.CreatedBy, &created, &revoked); err != nil {
		return u, err
	}
	var err error
	if u.CreatedAt, err = parseTime(created); err != nil {
		return u, err
	}
	if revoked.Valid {
		t, err := parseTime(revoked.String)
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
	err := each(ctx, d.reader, "SELECT "+consoleUserCols+" FROM console_users ORDER BY created_at DESC, id", nil, func(r *sql.Rows) error {
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
	u, err := scanConsoleUser(d.reader.QueryRowContext(ctx, "SELECT "+consoleUserCols+" FROM console_users WHERE token_hash = ? AND revoked_at IS NULL", hash))
	if errors.Is(err, sql.ErrNoRows) {
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
	now := formatTime(d.now())
	err := d.write(ctx, func(w *writeTx) error {
		res, err := w.conn.ExecContext(ctx, "UPDATE console_users SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", now, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return engine.Errorf(engine.ENOTFOUND, "No console user %s.", id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke console user %s: %w", id, err)
	}
	return nil
}
