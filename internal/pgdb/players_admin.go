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
		FROM tables t LEFT JOIN seats s ON s.table_id = t.id AND s.player_id = $1
		LEFT JOIN characters c ON c.table_id = t.id AND c.id = s.character_id
		WHERE t.owner_id = $1 OR s.player_id IS NOT NULL ORDER BY t.created_at DESC`, []any{id}, func(r pgx.Rows) error {
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
	// A turn that played one of their actions says so in its narration's
	// action_id; its model calls are theirs.
	if err := tx.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(c.cost_usd), 0) FROM llm_calls c
		WHERE c.turn != '' AND EXISTS (SELECT 1 FROM events e JOIN pending_actions a
			ON a.table_id = e.table_id AND a.id = e.data::jsonb ->> 'action_id'
			WHERE e.table_id = c.table_id AND e.turn = c.turn AND e.kind = 'narration' AND a.player_id = $1)`, id).
		Scan(&p.Spend.Calls, &p.Spend.USD); err != nil {
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

// playerFeedback reads the feedback table when the schema has one (the
// narrations' scores of PROTOCOL.md "Undo, notes…"); without it, none.
// Its columns are read by name, as on SQLite.
func playerFeedback(ctx context.Context, tx pgx.Tx, id string) ([]store.PlayerFeedback, error) {
	out := []store.PlayerFeedback{}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('feedback') IS NOT NULL").Scan(&exists); err != nil || !exists {
		return out, err
	}
	err := each(ctx, tx, "SELECT * FROM feedback WHERE player_id = $1", []any{id}, func(r pgx.Rows) error {
		vals, err := r.Values()
		if err != nil {
			return err
		}
		var f store.PlayerFeedback
		for i, fd := range r.FieldDescriptions() {
			switch fd.Name {
			case "table_id":
				f.TableID = fmt.Sprint(vals[i])
			case "seq":
				f.Seq = asInt64(vals[i])
			case "score":
				f.Score = int(asInt64(vals[i]))
			case "comment":
				if s, ok := vals[i].(string); ok {
					f.Comment = s
				}
			}
		}
		out = append(out, f)
		return nil
	})
	return out, err
}

// asInt64 is an integer column's value whatever its width.
func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case int16:
		return int64(n)
	}
	return 0
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
	x := store.PlayerExport{Characters: []map[string]any{}, Chat: []map[string]any{}}
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		if x.Player, err = playerDetail(ctx, tx, id); err != nil {
			return err
		}
		err = each(ctx, tx, `SELECT table_id, id, name, class, backstory, level, xp, hp, max_hp, gold FROM characters WHERE player_id = $1`,
			[]any{id}, func(r pgx.Rows) error {
				var table, cid, name, class, back string
				var level, xp, hp, maxHP, gold int
				if err := r.Scan(&table, &cid, &name, &class, &back, &level, &xp, &hp, &maxHP, &gold); err != nil {
					return err
				}
				x.Characters = append(x.Characters, map[string]any{"table_id": table, "id": cid, "name": name, "class": class,
					"backstory": back, "level": level, "xp": xp, "hp": hp, "max_hp": maxHP, "gold": gold})
				return nil
			})
		if err != nil {
			return err
		}
		if x.Actions, err = playerActions(ctx, tx, id, 0); err != nil {
			return err
		}
		return each(ctx, tx, `SELECT table_id, seq, ts, data::jsonb ->> 'text' FROM events
			WHERE kind = 'chat' AND data::jsonb ->> 'player_id' = $1 ORDER BY ts`, []any{id}, func(r pgx.Rows) error {
			var table, ts string
			var seq int64
			var text *string
			if err := r.Scan(&table, &seq, &ts, &text); err != nil {
				return err
			}
			t := ""
			if text != nil {
				t = *text
			}
			x.Chat = append(x.Chat, map[string]any{"table_id": table, "seq": seq, "ts": ts, "text": t})
			return nil
		})
	})
	if err != nil {
		return store.PlayerExport{}, fmt.Errorf("export player %s: %w", id, err)
	}
	return x, nil
}

// ErasePlayer erases player id, as db.DB.ErasePlayer documents: their
// name becomes store.ErasedName in the players table and in the events
// that carry it, their chat texts and their characters' backstories are
// removed (from the characters, the session-start actions, the agents'
// histories and memories), and their token is revoked. Every row stays.
// ENOTFOUND if there is no such player. The rewritten events are jsonb's
// text: the same JSON, its keys in jsonb's order.
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
		err := each(ctx, tx, `SELECT backstory FROM characters WHERE player_id = $1 AND backstory != ''
			UNION SELECT text FROM pending_actions WHERE player_id = $1 AND client_id LIKE 'start:%' AND text != ''`, []any{id},
			func(r pgx.Rows) error {
				var b string
				backstories = append(backstories, b)
				return r.Scan(&backstories[len(backstories)-1])
			})
		if err != nil {
			return err
		}
		steps := []struct {
			q    string
			args []any
		}{
			{"UPDATE players SET name = $1, token_hash = $2, erased_at = $3, banned_at = NULL, ban_reason = '' WHERE id = $4",
				[]any{store.ErasedName, revoked, now, id}},
			{"UPDATE characters SET backstory = '' WHERE player_id = $1", []any{id}},
			{"UPDATE pending_actions SET text = '' WHERE player_id = $1 AND client_id LIKE 'start:%'", []any{id}},
			{`UPDATE events SET data = jsonb_set(data::jsonb, '{text}', '""')::text WHERE kind = 'chat' AND data::jsonb ->> 'player_id' = $1`, []any{id}},
			{`UPDATE events SET data = jsonb_set(data::jsonb, '{name}', to_jsonb($1::text))::text WHERE kind IN ('chat', 'player_joined', 'player_left', 'action')
				AND data::jsonb ->> 'player_id' = $2`, []any{store.ErasedName, id}},
			{"UPDATE notes SET author_name = $1 WHERE author = $2", []any{store.ErasedName, id}},
			{"UPDATE feedback SET comment = '' WHERE player_id = $1", []any{id}},
			// A save point holds the whole state before a turn: the
			// player's backstory and words with it. Erasure wins over undo.
			{"DELETE FROM retcon_points WHERE table_id IN (SELECT table_id FROM characters WHERE player_id = $1)", []any{id}},
		}
		for _, s := range steps {
			if _, err := tx.Exec(ctx, s.q, s.args...); err != nil {
				return err
			}
		}
		if err := d.fenceErased(ctx, tx, id); err != nil {
			return err
		}
		for _, b := range backstories {
			esc, _ := json.Marshal(b) // as it stands in a JSON message body
			inBody := strings.Trim(string(esc), `"`)
			if _, err := tx.Exec(ctx, "UPDATE agent_messages SET body = replace(body, $1, '') WHERE strpos(body, $1) > 0", inBody); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "UPDATE memories SET summary = replace(summary, $1, ''), title = replace(title, $1, '') WHERE strpos(summary, $1) > 0 OR strpos(title, $1) > 0",
				b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("erase player %s: %w", id, err)
	}
	return nil
}
