package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"tavern/internal/engine"
)

const (
	qInsertPlayer = "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)"
	playerCols    = "id, name, created_at"
)

// CreatePlayer stores a player identity with the hash of its secret token
// (the token itself is never stored). It returns an EINVALID *engine.Error
// if tokenHash is empty and ECONFLICT if the id or the hash is taken. Safe
// for concurrent use.
func (d *DB) CreatePlayer(ctx context.Context, p engine.Player, tokenHash []byte) error {
	if len(tokenHash) == 0 {
		return engine.Errorf(engine.EINVALID, "player %s has no token", p.ID)
	}
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.exec(qInsertPlayer, p.ID, p.Name, tokenHash, formatTime(p.CreatedAt))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "player %s already exists", p.ID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create player %s: %w", p.ID, err)
	}
	return nil
}

// PlayerByTokenHash returns the player whose token hashes to hash, or an
// ENOTFOUND *engine.Error, also for a player banned or erased by the
// operator (their token no longer signs them in). Safe for concurrent use.
func (d *DB) PlayerByTokenHash(ctx context.Context, hash []byte) (engine.Player, error) {
	p, err := scanPlayer(d.reader.QueryRowContext(ctx, "SELECT "+playerCols+" FROM players WHERE token_hash = ? AND banned_at IS NULL AND erased_at IS NULL", hash))
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Player{}, engine.Errorf(engine.ENOTFOUND, "no player has this token")
	}
	if err != nil {
		return engine.Player{}, fmt.Errorf("player by token: %w", err)
	}
	return p, nil
}

// Player returns the player with id, or an ENOTFOUND *engine.Error. Safe for
// concurrent use.
func (d *DB) Player(ctx context.Context, id string) (engine.Player, error) {
	p, err := scanPlayer(d.reader.QueryRowContext(ctx, "SELECT "+playerCols+" FROM players WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return engine.Player{}, engine.Errorf(engine.ENOTFOUND, "player %s not found", id)
	}
	if err != nil {
		return engine.Player{}, fmt.Errorf("player %s: %w", id, err)
	}
	return p, nil
}

func scanPlayer(r rowScanner) (engine.Player, error) {
	var p engine.Player
	var created string
	if err := r.Scan(&p.ID, &p.Name, &created); err != nil {
		return p, err
	}
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return p, fmt.Errorf("player %s: created_at: %w", p.ID, err)
	}
	return p, nil
}
