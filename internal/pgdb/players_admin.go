package pgdb

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The operator's side of players (PROTOCOL.md "Operator, continued"):
// search, a player's page, the server-wide ban and the erasure; the twin
// of internal/db/players_admin.go. Events' data is JSON text: it is read
// as jsonb where SQLite uses json_extract.

const qPlayerRow = `SELECT p.id, p.name, p.created_at, p.banned_at IS NOT NULL, p.erased_at IS NOT NULL,
	(SELECT COUNT(*) FROM (SELECT table_id FROM seats WHERE player_id = p.id UNION SELECT id FROM tables WHERE owner_id = p.id) AS t)
	FROM players p`

func scanPlayerRow(r pgx.Row) (store.PlayerRow, error) {
	var p store.PlayerRow
	var created string
	if err := r.Scan(&p.ID, &p.Name, &created, &p.Banned, &p.Erased, &p.Tables); err != nil {
		return p, err
	}
	var err error
	p.CreatedAt, err = parseTime(created)
	return p, err
}

// SearchPlayers returns up to limit players whose name contains q (any
// case) or whose id is q, newest first; every player when q is empty.
func (d *DB) SearchPlayers(ctx context.Context, q string, limit int) ([]store.PlayerRow, error) {
	if limit <= 0 {
		limit = 100
	}
	like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(q) + "%"
	var out []store.PlayerRow
	// ILIKE: SQLite's LIKE ignores case, PostgreSQL's does not.
	err := each(ctx, d.pool, qPlayerRow+` WHERE $1::text = '' OR p.id = $1 OR p.name ILIKE $2 ESCAPE '\' ORDER BY p.created_at DESC, p.id LIMIT $3`,
		[]any{q, like, limit}, func(r pgx.Rows) error {
			p, err := scanPlayerRow(r)
			out = append(out, p)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("search players: %w", err)
	}
	return out, nil
}

func playerNotFound(id string) error {
	return engine.Errorf(engine.ENOTFOUND, "No player %s.", id)
}

// PlayerDetail returns what the operator's page shows of player id:
// their tables and characters, their actions (the last 20 of them), the
// model spend of the turns that played those actions, and the feedback
// they gave. ENOTFOUND if there is no such player.
func (d *DB) PlayerDetail(ctx context.Context, id string) (store.PlayerDetail, error) {
	var p store.PlayerDetail
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		p, err = playerDetail(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.PlayerDetail{}, fmt.Errorf("player %s: %w", id, err)
	}
	return p, nil
}

func playerDetail(ctx context.Context, tx pgx.Tx, id string) (store.PlayerDetail, error) {
	var p store.PlayerDetail
	row, err := scanPlayerRow(tx.QueryRow(ctx, qPlayerRow+" WHERE p.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return p, playerNotFound(id)
	}
	if err != nil {
		return p, err
	}
	p.PlayerRow = row
	var banned *string
	if err := tx.QueryRow(ctx, "SELECT banned_at, ban_reason FROM players WHERE id = $1", id).Scan(&banned, &p.BanReason); err != nil {
		return p, err
	}
	if banned != nil {
		t, err := parseTime(*banned)
		if err != nil {
			return p, err
		}
		p.BannedAt = &t
	}
	p.Seats = []store.PlayerSeat{}
	err = each(ctx, tx, `SELECT t.id, t.name, t.owner_id = $1, COALESCE(s.seat, ''), COALESCE(c.name, ''), COALESCE(c.class, ''),
			COALESCE(c.level, 0), t.closed_at IS NOT NULL
		FROM (`+qMyTableIDs+`) m JOIN tables t ON t.id = m.id
		LEFT JOIN seats s ON s.table_id = t.id AND s.player_id = $1
		LEFT JOIN characters c ON c.table_id = t.id AND c.id = s.character_id
		ORDER BY t.created_at DESC`, []any{id}, func(r pgx.Rows) error {
		var s store.PlayerSeat
		if err := r.Scan(&s.TableID, &s.TableName, &s.Owner, &s.Seat, &s.Character, &s.Class, &s.Level, &s.Closed); err != nil {
			return err
		}
		p.Seats = append(p.Seats, s)
		return nil
	})
	if err != nil {
		return p, err
	}
	if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM pending_actions WHERE player_id = $1", id).Scan(&p.Actions); err != nil {
		return p, err
	}
	if p.Recent, err = playerActions(ctx, tx, id, 20); err != nil {
		return p, err
	}
	if err := tx.QueryRow(ctx, qPlayerSpend, id).Scan(&p.Spend.Calls, &p.Spend.USD); err != nil {
		return p, err
	}
	p.Feedback, err = playerFeedback(ctx, tx, id)
	return p, err
}

// playerActions returns the last limit actions of a player (<= 0: all),
// newest first.
func playerActions(ctx context.Context, tx pgx.Tx, id string, limit int) ([]store.PlayerAction, error) {
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	out := []store.PlayerAction{}
	err := each(ctx, tx, `SELECT table_id, id, text, state, created_at FROM pending_actions WHERE player_id = $1
		ORDER BY created_at DESC LIMIT $2::bigint`, []any{id, lim}, func(r pgx.Rows) error {
		var a store.PlayerAction
		var at string
		if err := r.Scan(&a.TableID, &a.ActionID, &a.Text, &a.State, &at); err != nil {
			return err
		}
		var err error
		a.CreatedAt, err = parseTime(at)
		out = append(out, a)
		return err
	})
	return out, err
}

// qPlayerSpend sums the model calls of the turns that played player $1's
// actions, the turns first (db's qPlayerSpend says how).
const qPlayerSpend = `WITH acted AS (SELECT DISTINCT table_id FROM pending_actions WHERE player_id = $1),
turns AS (SELECT DISTINCT e.table_id, e.turn FROM acted
	JOIN events e ON e.table_id = acted.table_id AND e.kind = 'narration'
	JOIN pending_actions a ON a.table_id = e.table_id AND a.id = e.data::jsonb ->> 'action_id'
	WHERE a.player_id = $1 AND e.turn != '')
SELECT COUNT(*), COALESCE(SUM(c.cost_usd), 0) FROM turns JOIN llm_calls c ON c.table_id = turns.table_id AND c.turn = turns.turn`

// playerFeedback returns the scores player id gave narrations (PROTOCOL.md
// "Undo, notes…"), by table and event.
func playerFeedback(ctx context.Context, tx pgx.Tx, id string) ([]store.PlayerFeedback, error) {
	out := []store.PlayerFeedback{}
	err := each(ctx, tx, "SELECT table_id, seq, score, comment FROM feedback WHERE player_id = $1 ORDER BY table_id, seq", []any{id},
		func(r pgx.Rows) error {
			var f store.PlayerFeedback
			err := r.Scan(&f.TableID, &f.Seq, &f.Score, &f.Comment)
			out = append(out, f)
			return err
		})
	return out, err
}

// SetPlayerBan bans player id server-wide (reason kept for the console)
// or lifts the ban. A banned player's token signs nobody in
// (PlayerByTokenHash) until the ban is lifted. ENOTFOUND if there is no
// such player.
func (d *DB) SetPlayerBan(ctx context.Context, id string, banned bool, reason string) error {
	var at *string
	if banned {
		s := formatTime(d.now())
		at = &s
	} else {
		reason = ""
	}
	ct, err := d.pool.Exec(ctx, "UPDATE players SET banned_at = $1, ban_reason = $2 WHERE id = $3", at, reason, id)
	if err == nil && ct.RowsAffected() == 0 {
		err = playerNotFound(id)
	}
	if err != nil {
		return fmt.Errorf("ban %s: %w", id, err)
	}
	return nil
}

// ExportPlayer returns every record of player id: the page's detail,
// their characters (backstories included), all their actions and their
// chat lines. ENOTFOUND if there is no such player.
func (d *DB) ExportPlayer(ctx context.Context, id string) (store.PlayerExport, error) {
	x := store.PlayerExport{Characters: []store.ExportedCharacter{}, Chat: []store.ExportedChat{}}
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		if x.Player, err = playerDetail(ctx, tx, id); err != nil {
			return err
		}
		err = each(ctx, tx, `SELECT table_id, id, name, class, backstory, level, xp, hp, max_hp, gold FROM characters
			WHERE table_id IN (`+qSeatTables+`) AND player_id = $1`, []any{id}, func(r pgx.Rows) error {
			var c store.ExportedCharacter
			err := r.Scan(&c.TableID, &c.ID, &c.Name, &c.Class, &c.Backstory, &c.Level, &c.XP, &c.HP, &c.MaxHP, &c.Gold)
			x.Characters = append(x.Characters, c)
			return err
		})
		if err != nil {
			return err
		}
		if x.Actions, err = playerActions(ctx, tx, id, 0); err != nil {
			return err
		}
		return each(ctx, tx, `SELECT table_id, seq, ts, COALESCE(data::jsonb ->> 'text', '') FROM events
			WHERE table_id IN (`+qSeatTables+`) AND kind = 'chat' AND data::jsonb ->> 'player_id' = $1 ORDER BY ts, table_id, seq`,
			[]any{id}, func(r pgx.Rows) error {
				var c store.ExportedChat
				var ts string
				if err := r.Scan(&c.TableID, &c.Seq, &ts, &c.Text); err != nil {
					return err
				}
				var err error
				c.TS, err = parseTime(ts)
				x.Chat = append(x.Chat, c)
				return err
			})
	})
	if err != nil {
		return store.PlayerExport{}, fmt.Errorf("export player %s: %w", id, err)
	}
	return x, nil
}

// erasedKinds is store.ErasedEventKinds as an SQL list.
var erasedKinds = "'" + strings.Join(store.ErasedEventKinds, "', '") + "'"

// qSeatTables selects the tables player $1 sits at or ever sat at, those
// an erasure touches (db's qSeatTables says why they are all).
const qSeatTables = "SELECT table_id FROM seats WHERE player_id = $1 UNION SELECT table_id FROM pending_actions WHERE player_id = $1"

// ErasePlayer erases player id, as db.DB.ErasePlayer documents: their
// name becomes store.ErasedName in the players table and in the events
// that carry it, their chat texts and their characters' backstories are
// removed (from the characters, the session-start actions, the agents'
// histories and memories), the save points of the tables they sit or
// sat at go, and their token is revoked. Every other row stays.
// ENOTFOUND if there is no such player. The events are rewritten in Go
// (store.ErasedEventData), not by jsonb, which would reorder their keys:
// their bytes are SQLite's.
func (d *DB) ErasePlayer(ctx context.Context, id string) error {
	now := formatTime(d.now())
	revoked := make([]byte, 32)
	rand.Read(revoked)
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var name string
		if err := tx.QueryRow(ctx, "SELECT name FROM players WHERE id = $1 FOR UPDATE", id).Scan(&name); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return playerNotFound(id)
			}
			return err
		}
		// The session-start actions keep the backstories too, even once
		// the hub blanked the characters'.
		var backstories []string
		err := each(ctx, tx, `SELECT backstory FROM characters WHERE table_id IN (`+qSeatTables+`) AND player_id = $1 AND backstory != ''
			UNION SELECT text FROM pending_actions WHERE player_id = $1 AND client_id LIKE 'start:%' AND text != ''`, []any{id},
			func(r pgx.Rows) error {
				var b string
				err := r.Scan(&b)
				backstories = append(backstories, b)
				return err
			})
		if err != nil {
			return err
		}
		var b pgx.Batch
		err = each(ctx, tx, `SELECT table_id, seq, kind, data FROM events WHERE table_id IN (`+qSeatTables+`)
			AND kind IN (`+erasedKinds+`) AND data::jsonb ->> 'player_id' = $1`, []any{id}, func(r pgx.Rows) error {
			var table, kind, data string
			var seq int64
			if err := r.Scan(&table, &seq, &kind, &data); err != nil {
				return err
			}
			out, err := store.ErasedEventData(kind, []byte(data))
			if err != nil {
				return fmt.Errorf("event %d of table %s: %w", seq, table, err)
			}
			b.Queue("UPDATE events SET data = $1 WHERE table_id = $2 AND seq = $3", string(out), table, seq)
			return nil
		})
		if err != nil {
			return err
		}
		for _, s := range []struct {
			q    string
			args []any
		}{
			{"UPDATE players SET name = $2, token_hash = $3, erased_at = $4, banned_at = NULL, ban_reason = '' WHERE id = $1",
				[]any{id, store.ErasedName, revoked, now}},
			{"UPDATE characters SET backstory = '' WHERE table_id IN (" + qSeatTables + ") AND player_id = $1", []any{id}},
			{"UPDATE pending_actions SET text = '' WHERE player_id = $1 AND client_id LIKE 'start:%'", []any{id}},
			// An owner writes notes at a table they need not sit at.
			{"UPDATE notes SET author_name = $2 WHERE table_id IN (" + qSeatTables + " UNION SELECT id FROM tables WHERE owner_id = $1) AND author = $1",
				[]any{id, store.ErasedName}},
			{"UPDATE feedback SET comment = '' WHERE player_id = $1", []any{id}},
			// A save point holds the whole state before a turn: the
			// player's backstory and words with it. Erasure wins over undo.
			{"DELETE FROM retcon_points WHERE table_id IN (" + qSeatTables + ")", []any{id}},
		} {
			b.Queue(s.q, s.args...)
		}
		// Another node that runs one of their tables must not commit its
		// memory of them back: raise those tables' epochs.
		if err := d.fenceErased(ctx, tx, id); err != nil {
			return err
		}
		for _, bs := range backstories {
			esc, _ := json.Marshal(bs) // as it stands in a JSON message body
			inBody := strings.Trim(string(esc), `"`)
			b.Queue("UPDATE agent_messages SET body = replace(body, $2, '') WHERE table_id IN ("+qSeatTables+") AND strpos(body, $2) > 0",
				id, inBody)
			b.Queue(`UPDATE memories SET summary = replace(summary, $2, ''), title = replace(title, $2, '')
				WHERE table_id IN (`+qSeatTables+`) AND (strpos(summary, $2) > 0 OR strpos(title, $2) > 0)`, id, bs)
		}
		return tx.SendBatch(ctx, &b).Close()
	})
	if err != nil {
		return fmt.Errorf("erase player %s: %w", id, err)
	}
	return nil
}
