package pgdb

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The table owner's side (PROTOCOL.md "Table owners"): the private mark,
// invite code hash and bans, written with a commit (store.Commit.Settings),
// and the tables a player owns or sits at. The twin of internal/db's
// owners.go (migration 0013), same semantics; not to be confused with
// owners.go here, which is which node runs a table.

const (
	qRenameTable = "UPDATE tables SET name = $1 WHERE id = $2"
	qSetPrivate  = "UPDATE tables SET private = $1 WHERE id = $2"
	qSetInvite   = "UPDATE tables SET invite_hash = $1 WHERE id = $2"
	qInsertBan   = "INSERT INTO table_bans (table_id, player_id, banned_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"
	qDeleteBan   = "DELETE FROM table_bans WHERE table_id = $1 AND player_id = $2"
	npcHPExact   = "exact"
)

// npcHPColumn is the tables.npc_hp value of a Config.NPCHP: "" is exact.
func npcHPColumn(v string) string {
	if v == "" {
		return npcHPExact
	}
	return v
}

// npcHPField is the Config.NPCHP of a tables.npc_hp value: exact is "",
// so a table stored before the setting reads as one created after.
func npcHPField(v string) string {
	if v == npcHPExact {
		return ""
	}
	return v
}

// setOwnerMarks queues a commit's owner change (store.Commit.Settings) on t.
// The table's row must exist (ENOTFOUND), as for the operator's marks; a
// ban of a missing table fails on its foreign key, which Commit also
// answers ENOTFOUND.
func setOwnerMarks(t *btx, c store.Commit) {
	o := c.Settings
	if o == nil {
		return
	}
	id := c.TableID
	if o.Name != nil {
		t.execJudged(qRenameTable, []any{*o.Name, id}, updatedTable(id, "rename table"))
	}
	if o.Private != nil {
		t.execJudged(qSetPrivate, []any{*o.Private, id}, updatedTable(id, "set private mark"))
	}
	if o.InviteHash != nil {
		t.execJudged(qSetInvite, []any{o.InviteHash, id}, updatedTable(id, "set invite"))
	}
	if o.Ban != "" {
		t.exec(qInsertBan, []any{id, o.Ban, formatTime(o.BannedAt)}, wrapErr("ban "+o.Ban))
	}
	if o.Unban != "" {
		t.exec(qDeleteBan, []any{id, o.Unban}, wrapErr("unban "+o.Unban))
	}
}

// TableAccess returns a table's invite code hash and bans (store.Access);
// ENOTFOUND if there is no such table. Safe for concurrent use.
func (d *DB) TableAccess(ctx context.Context, tableID string) (store.Access, error) {
	var a store.Access
	err := d.read(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, "SELECT invite_hash FROM tables WHERE id = $1", tableID).Scan(&a.InviteHash)
		if errors.Is(err, pgx.ErrNoRows) {
			return tableNotFound(tableID)
		}
		if err != nil {
			return err
		}
		return each(ctx, tx, "SELECT player_id FROM table_bans WHERE table_id = $1 ORDER BY player_id", []any{tableID}, func(r pgx.Rows) error {
			var p string
			err := r.Scan(&p)
			a.Bans = append(a.Bans, p)
			return err
		})
	})
	if err != nil {
		return store.Access{}, fmt.Errorf("access of table %s: %w", tableID, withUnavailable(err))
	}
	return a, nil
}

// qMyTableIDs selects the tables player $1 owns or sits at: two indexed
// selects, where an OR over a join could use neither.
const qMyTableIDs = "SELECT id FROM tables WHERE owner_id = $1 UNION SELECT table_id FROM seats WHERE player_id = $1"

// PlayerTables returns every table player playerID owns or sits at,
// closed ones included, newest activity first (the last event's time,
// then creation). Safe for concurrent use.
func (d *DB) PlayerTables(ctx context.Context, playerID string) ([]store.PlayerTable, error) {
	q := `SELECT ` + tCols + `, COALESCE(g.game::jsonb ->> 'mode', ''),
	(SELECT count(*) FROM seats x WHERE x.table_id = t.id),
	COALESCE(s.seat, ''), COALESCE(c.id, ''), COALESCE(c.name, ''), COALESCE(c.class, ''), COALESCE(c.level, 0),
	t.paused, COALESCE(t.closed_at, ''),
	COALESCE((SELECT e.ts FROM events e WHERE e.table_id = t.id ORDER BY e.seq DESC LIMIT 1), '')
FROM (` + qMyTableIDs + `) m JOIN tables t ON t.id = m.id
LEFT JOIN seats s ON s.table_id = t.id AND s.player_id = $1
LEFT JOIN characters c ON c.table_id = t.id AND c.id = s.character_id
LEFT JOIN game_state g ON g.table_id = t.id`
	var out []store.PlayerTable
	err := each(ctx, d.pool, q, []any{playerID}, func(r pgx.Rows) error {
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
		return nil, fmt.Errorf("tables of player %s: %w", playerID, withUnavailable(err))
	}
	slices.SortFunc(out, func(a, b store.PlayerTable) int {
		if c := b.LastEventAt.Compare(a.LastEventAt); c != 0 {
			return c
		}
		return b.Table.CreatedAt.Compare(a.Table.CreatedAt)
	})
	return out, nil
}

// PrivateTableIDs returns the ids of the private tables player playerID
// owns or sits at: all the lobby needs to know of them to list them.
// Safe for concurrent use.
func (d *DB) PrivateTableIDs(ctx context.Context, playerID string) ([]string, error) {
	rows, err := d.pool.Query(ctx, `SELECT id FROM tables WHERE owner_id = $1 AND private
	UNION SELECT t.id FROM seats s JOIN tables t ON t.id = s.table_id WHERE s.player_id = $1 AND t.private`, playerID)
	var out []string
	if err == nil {
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return nil, fmt.Errorf("private tables of player %s: %w", playerID, withUnavailable(err))
	}
	return out, nil
}

// TableByInvite returns the id of the open table whose invite code hashes
// to hash; ENOTFOUND if there is none. Safe for concurrent use.
func (d *DB) TableByInvite(ctx context.Context, hash []byte) (string, error) {
	var id string
	err := d.pool.QueryRow(ctx, "SELECT id FROM tables WHERE invite_hash = $1 AND closed_at IS NULL", hash).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", engine.Errorf(engine.ENOTFOUND, "no table has this invite")
	}
	if err != nil {
		return "", fmt.Errorf("table by invite: %w", withUnavailable(err))
	}
	return id, nil
}
