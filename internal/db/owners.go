package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The owner's side of a table (PROTOCOL.md "Table owners"): its private
// mark, invite code hash and bans, written with a commit
// (store.Commit.Settings), and the tables a player owns or sits at.

const (
	qRenameTable  = "UPDATE tables SET name = ? WHERE id = ?"
	qSetPrivate   = "UPDATE tables SET private = ? WHERE id = ?"
	qSetInvite    = "UPDATE tables SET invite_hash = ? WHERE id = ?"
	qInsertBan    = "INSERT INTO table_bans (table_id, player_id, banned_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
	qDeleteBan    = "DELETE FROM table_bans WHERE table_id = ? AND player_id = ?"
	npcHPExactCol = "exact"
)

var ownerQueries = []string{qRenameTable, qSetPrivate, qSetInvite, qInsertBan, qDeleteBan}

// npcHPColumn is the tables.npc_hp value of a Config.NPCHP: "" is exact.
func npcHPColumn(v string) string {
	if v == "" {
		return npcHPExactCol
	}
	return v
}

// npcHPField is the Config.NPCHP of a tables.npc_hp value: exact is "",
// so a table stored before the setting reads as one created after.
func npcHPField(v string) string {
	if v == npcHPExactCol {
		return ""
	}
	return v
}

// setOwnerMarks writes a commit's owner change (store.Commit.Settings).
func setOwnerMarks(w *writeTx, c store.Commit) error {
	o := c.Settings
	if o == nil {
		return nil
	}
	if o.Name != nil {
		if err := updateTable(w, c.TableID, qRenameTable, *o.Name, c.TableID); err != nil {
			return fmt.Errorf("rename table: %w", err)
		}
	}
	if o.Private != nil {
		if err := updateTable(w, c.TableID, qSetPrivate, *o.Private, c.TableID); err != nil {
			return fmt.Errorf("set private mark: %w", err)
		}
	}
	if o.InviteHash != nil {
		if err := updateTable(w, c.TableID, qSetInvite, o.InviteHash, c.TableID); err != nil {
			return fmt.Errorf("set invite: %w", err)
		}
	}
	if o.Ban != "" {
		if _, err := w.exec(qInsertBan, c.TableID, o.Ban, formatTime(o.BannedAt)); err != nil {
			return fmt.Errorf("ban %s: %w", o.Ban, err)
		}
	}
	if o.Unban != "" {
		if _, err := w.exec(qDeleteBan, c.TableID, o.Unban); err != nil {
			return fmt.Errorf("unban %s: %w", o.Unban, err)
		}
	}
	return nil
}

// TableAccess returns a table's invite code hash and bans (store.Access);
// ENOTFOUND if there is no such table. Safe for concurrent use.
func (d *DB) TableAccess(ctx context.Context, tableID string) (store.Access, error) {
	var a store.Access
	err := d.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, "SELECT invite_hash FROM tables WHERE id = ?", tableID).Scan(&a.InviteHash)
		if errors.Is(err, sql.ErrNoRows) {
			return tableNotFound(tableID)
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT player_id FROM table_bans WHERE table_id = ? ORDER BY player_id", tableID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p string
			if err := rows.Scan(&p); err != nil {
				return err
			}
			a.Bans = append(a.Bans, p)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Access{}, fmt.Errorf("access of table %s: %w", tableID, err)
	}
	return a, nil
}

// qMyTableIDs selects the tables player ?1 owns or sits at: two indexed
// selects (tables_owner, seats_player), where an OR over a join could use
// neither and read every table.
const qMyTableIDs = "SELECT id FROM tables WHERE owner_id = ?1 UNION SELECT table_id FROM seats WHERE player_id = ?1"

// PlayerTables returns every table player playerID owns or sits at,
// closed ones included, newest activity first (the last event's time,
// then creation). Safe for concurrent use.
func (d *DB) PlayerTables(ctx context.Context, playerID string) ([]store.PlayerTable, error) {
	q := `SELECT ` + tCols + `, COALESCE(json_extract(g.game, '$.mode'), ''),
		(SELECT count(*) FROM seats x WHERE x.table_id = t.id),
		COALESCE(s.seat, ''), COALESCE(c.id, ''), COALESCE(c.name, ''), COALESCE(c.class, ''), COALESCE(c.level, 0),
		t.paused, COALESCE(t.closed_at, ''),
		COALESCE((SELECT e.ts FROM events e WHERE e.table_id = t.id ORDER BY e.seq DESC LIMIT 1), '')
		FROM (` + qMyTableIDs + `) m JOIN tables t ON t.id = m.id
		LEFT JOIN seats s ON s.table_id = t.id AND s.player_id = ?1
		LEFT JOIN characters c ON c.table_id = t.id AND c.id = s.character_id
		LEFT JOIN game_state g ON g.table_id = t.id`
	var out []store.PlayerTable
	err := each(ctx, d.reader, q, []any{playerID}, func(r *sql.Rows) error {
		var p store.PlayerTable
		var closed, last string
		var err error
		p.Table, err = scanTable(r, &p.Mode, &p.Seated, &p.Seat, &p.Character.ID, &p.Character.Name, &p.Character.Class,
			&p.Character.Level, &p.Flags.Paused, &closed, &last)
		if err != nil {
			return err
		}
		if err := setClosed(&p.Flags, p.Table.ID, closed); err != nil {
			return err
		}
		if p.LastEventAt, err = parseOptTime(last); err != nil {
			return fmt.Errorf("table %s: last event: %w", p.Table.ID, err)
		}
		if p.LastEventAt.IsZero() {
			p.LastEventAt = p.Table.CreatedAt
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tables of player %s: %w", playerID, err)
	}
	sortPlayerTables(out)
	return out, nil
}

// PrivateTableIDs returns the ids of the private tables player playerID
// owns or sits at: all the lobby needs to know of them to list them.
// Safe for concurrent use.
func (d *DB) PrivateTableIDs(ctx context.Context, playerID string) ([]string, error) {
	var out []string
	err := each(ctx, d.reader, `SELECT id FROM tables WHERE owner_id = ?1 AND private
		UNION SELECT t.id FROM seats s JOIN tables t ON t.id = s.table_id WHERE s.player_id = ?1 AND t.private`, []any{playerID},
		func(r *sql.Rows) error {
			var id string
			err := r.Scan(&id)
			out = append(out, id)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("private tables of player %s: %w", playerID, err)
	}
	return out, nil
}

func sortPlayerTables(ts []store.PlayerTable) {
	slices.SortFunc(ts, func(a, b store.PlayerTable) int {
		if c := b.LastEventAt.Compare(a.LastEventAt); c != 0 {
			return c
		}
		return b.Table.CreatedAt.Compare(a.Table.CreatedAt)
	})
}

// TableByInvite returns the id of the open table whose invite code hashes
// to hash; ENOTFOUND if there is none. Safe for concurrent use.
func (d *DB) TableByInvite(ctx context.Context, hash []byte) (string, error) {
	var id string
	err := d.reader.QueryRowContext(ctx, "SELECT id FROM tables WHERE invite_hash = ? AND closed_at IS NULL", hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", engine.Errorf(engine.ENOTFOUND, "no table has this invite")
	}
	if err != nil {
		return "", fmt.Errorf("table by invite: %w", err)
	}
	return id, nil
}
