package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The operator's side of players (PROTOCOL.md "Operator, continued"):
// search, a player's page, the server-wide ban and the erasure.

const qPlayerRow = `SELECT p.id, p.name, p.created_at, p.banned_at IS NOT NULL, p.erased_at IS NOT NULL,
	(SELECT COUNT(*) FROM (SELECT table_id FROM seats WHERE player_id = p.id UNION SELECT id FROM tables WHERE owner_id = p.id))
	FROM players p`

func scanPlayerRow(r rowScanner) (store.PlayerRow, error) {
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
	err := each(ctx, d.reader, qPlayerRow+` WHERE ? = '' OR p.id = ? OR p.name LIKE ? ESCAPE '\' ORDER BY p.created_at DESC, p.id LIMIT ?`,
		[]any{q, q, like, limit}, func(r *sql.Rows) error {
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
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = playerDetail(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.PlayerDetail{}, fmt.Errorf("player %s: %w", id, err)
	}
	return p, nil
}

func playerDetail(ctx context.Context, tx *sql.Tx, id string) (store.PlayerDetail, error) {
	var p store.PlayerDetail
	row, err := scanPlayerRow(tx.QueryRowContext(ctx, qPlayerRow+" WHERE p.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, playerNotFound(id)
	}
	if err != nil {
		return p, err
	}
	p.PlayerRow = row
	var banned sql.NullString
	if err := tx.QueryRowContext(ctx, "SELECT banned_at, ban_reason FROM players WHERE id = ?", id).Scan(&banned, &p.BanReason); err != nil {
		return p, err
	}
	if banned.Valid {
		t, err := parseTime(banned.String)
		if err != nil {
			return p, err
		}
		p.BannedAt = &t
	}
	p.Seats = []store.PlayerSeat{}
	err = each(ctx, tx, `SELECT t.id, t.name, t.owner_id = ?1, COALESCE(s.seat, ''), COALESCE(c.name, ''), COALESCE(c.class, ''),
			COALESCE(c.level, 0), t.closed_at IS NOT NULL
		FROM (`+qMyTableIDs+`) m JOIN tables t ON t.id = m.id
		LEFT JOIN seats s ON s.table_id = t.id AND s.player_id = ?1
		LEFT JOIN characters c ON c.table_id = t.id AND c.id = s.character_id
		ORDER BY t.created_at DESC`, []any{id}, func(r *sql.Rows) error {
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
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pending_actions WHERE player_id = ?", id).Scan(&p.Actions); err != nil {
		return p, err
	}
	if p.Recent, err = playerActions(ctx, tx, id, 20); err != nil {
		return p, err
	}
	if err := tx.QueryRowContext(ctx, qPlayerSpend, id).Scan(&p.Spend.Calls, &p.Spend.USD); err != nil {
		return p, err
	}
	p.Feedback, err = playerFeedback(ctx, tx, id)
	return p, err
}

// playerActions returns the last limit actions of a player (<= 0: all),
// newest first.
func playerActions(ctx context.Context, tx *sql.Tx, id string, limit int) ([]store.PlayerAction, error) {
	if limit <= 0 {
		limit = -1
	}
	out := []store.PlayerAction{}
	err := each(ctx, tx, `SELECT table_id, id, text, state, created_at FROM pending_actions WHERE player_id = ?
		ORDER BY created_at DESC LIMIT ?`, []any{id, limit}, func(r *sql.Rows) error {
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

// qPlayerSpend sums the model calls of the turns that played player ?1's
// actions: a turn that played one says so in its narration's action_id.
// The turns come first, from the narrations of the tables the player
// acted at (pending_actions_player, events_kind), and their calls then by
// llm_calls_turn; not every call of the log matched against the events.
const qPlayerSpend = `WITH acted AS (SELECT DISTINCT table_id FROM pending_actions WHERE player_id = ?1),
turns AS (SELECT DISTINCT e.table_id, e.turn FROM acted
	JOIN events e ON e.table_id = acted.table_id AND e.kind = 'narration'
	JOIN pending_actions a ON a.table_id = e.table_id AND a.id = json_extract(e.data, '$.action_id')
	WHERE a.player_id = ?1 AND e.turn != '')
SELECT COUNT(*), COALESCE(SUM(c.cost_usd), 0) FROM turns JOIN llm_calls c ON c.table_id = turns.table_id AND c.turn = turns.turn`

// playerFeedback returns the scores player id gave narrations (PROTOCOL.md
// "Undo, notes…"), by table and event.
func playerFeedback(ctx context.Context, tx *sql.Tx, id string) ([]store.PlayerFeedback, error) {
	out := []store.PlayerFeedback{}
	err := each(ctx, tx, "SELECT table_id, seq, score, comment FROM feedback WHERE player_id = ? ORDER BY table_id, seq", []any{id},
		func(r *sql.Rows) error {
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
	var at any
	if banned {
		at = formatTime(d.now())
	} else {
		reason = ""
	}
	err := d.write(ctx, func(w *writeTx) error {
		res, err := w.conn.ExecContext(ctx, "UPDATE players SET banned_at = ?, ban_reason = ? WHERE id = ?", at, reason, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return playerNotFound(id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ban %s: %w", id, err)
	}
	return nil
}

// PlayerExport is all of a player's data, as the operator exports it;
// the type is store's, which pgdb returns too.
type PlayerExport = store.PlayerExport

// ExportPlayer returns every record of player id: the page's detail,
// their characters (backstories included), all their actions and their
// chat lines. ENOTFOUND if there is no such player.
func (d *DB) ExportPlayer(ctx context.Context, id string) (PlayerExport, error) {
	x := PlayerExport{Characters: []store.ExportedCharacter{}, Chat: []store.ExportedChat{}}
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		if x.Player, err = playerDetail(ctx, tx, id); err != nil {
			return err
		}
		err = each(ctx, tx, `SELECT table_id, id, name, class, backstory, level, xp, hp, max_hp, gold FROM characters
			WHERE table_id IN (`+qSeatTables+`) AND player_id = ?1`, []any{id}, func(r *sql.Rows) error {
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
		return each(ctx, tx, `SELECT table_id, seq, ts, COALESCE(json_extract(data, '$.text'), '') FROM events
			WHERE table_id IN (`+qSeatTables+`) AND kind = 'chat' AND json_extract(data, '$.player_id') = ?1 ORDER BY ts, table_id, seq`,
			[]any{id}, func(r *sql.Rows) error {
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
		return PlayerExport{}, fmt.Errorf("export player %s: %w", id, err)
	}
	return x, nil
}

// erasedKinds is store.ErasedEventKinds as an SQL list.
var erasedKinds = "'" + strings.Join(store.ErasedEventKinds, "', '") + "'"

// qSeatTables selects the tables player ?1 sits at or ever sat at: taking
// a seat writes the session start's action (pending_actions) in the
// commit of its player_joined event, and spectators cannot chat, so every
// event that names the player is at one of these tables. An erasure
// touches these tables only, each statement by an index.
const qSeatTables = "SELECT table_id FROM seats WHERE player_id = ?1 UNION SELECT table_id FROM pending_actions WHERE player_id = ?1"

// ErasePlayer erases player id (PROTOCOL.md "Operator, continued"): their
// name becomes store.ErasedName in the players table and in the events
// that carry it (their actions too, so the story export names them so),
// their chat texts and their characters' backstories are removed (from
// the characters, the session-start actions that carried them, the
// agents' histories and memories), and their token is revoked. The save
// points of every table they sit or sat at (qSeatTables) go: each holds
// a state with their backstory. Every other row stays, so the game log
// keeps its shape; the events keep their bytes but for the erased values
// (store.ErasedEventData). ENOTFOUND if there is no such player. The
// tables in memory must be scrubbed by their owner (the hub) first, or a
// later commit would write a backstory back.
func (d *DB) ErasePlayer(ctx context.Context, id string) error {
	now := formatTime(d.now())
	revoked := make([]byte, 32)
	rand.Read(revoked)
	err := d.write(ctx, func(w *writeTx) error {
		exec := func(q string, args ...any) error {
			_, err := w.conn.ExecContext(ctx, q, args...)
			return err
		}
		var name string
		if err := w.conn.QueryRowContext(ctx, "SELECT name FROM players WHERE id = ?", id).Scan(&name); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return playerNotFound(id)
			}
			return err
		}
		// The session-start actions keep the backstories too, even once
		// the hub blanked the characters'.
		var backstories []string
		err := each(ctx, w.conn, `SELECT backstory FROM characters WHERE table_id IN (`+qSeatTables+`) AND player_id = ?1 AND backstory != ''
			UNION SELECT text FROM pending_actions WHERE player_id = ?1 AND client_id LIKE 'start:%' AND text != ''`, []any{id},
			func(r *sql.Rows) error {
				var b string
				err := r.Scan(&b)
				backstories = append(backstories, b)
				return err
			})
		if err != nil {
			return err
		}
		type event struct {
			table, kind string
			seq         int64
			data        []byte
		}
		var evs []event
		err = each(ctx, w.conn, `SELECT table_id, seq, kind, data FROM events WHERE table_id IN (`+qSeatTables+`)
			AND kind IN (`+erasedKinds+`) AND json_extract(data, '$.player_id') = ?1`, []any{id}, func(r *sql.Rows) error {
			var e event
			err := r.Scan(&e.table, &e.seq, &e.kind, &e.data)
			evs = append(evs, e)
			return err
		})
		if err != nil {
			return err
		}
		for _, e := range evs {
			data, err := store.ErasedEventData(e.kind, e.data)
			if err != nil {
				return fmt.Errorf("event %d of table %s: %w", e.seq, e.table, err)
			}
			if err := exec("UPDATE events SET data = ? WHERE table_id = ? AND seq = ?", string(data), e.table, e.seq); err != nil {
				return err
			}
		}
		steps := []struct {
			q    string
			args []any
		}{
			{"UPDATE players SET name = ?2, token_hash = ?3, erased_at = ?4, banned_at = NULL, ban_reason = '' WHERE id = ?1",
				[]any{id, store.ErasedName, revoked, now}},
			{"UPDATE characters SET backstory = '' WHERE table_id IN (" + qSeatTables + ") AND player_id = ?1", []any{id}},
			{"UPDATE pending_actions SET text = '' WHERE player_id = ?1 AND client_id LIKE 'start:%'", []any{id}},
			// An owner writes notes at a table they need not sit at.
			{"UPDATE notes SET author_name = ?2 WHERE table_id IN (" + qSeatTables + " UNION SELECT id FROM tables WHERE owner_id = ?1) AND author = ?1",
				[]any{id, store.ErasedName}},
			{"UPDATE feedback SET comment = '' WHERE player_id = ?1", []any{id}},
			// A save point holds the whole state before a turn: the
			// player's backstory and words with it. Erasure wins over undo.
			{"DELETE FROM retcon_points WHERE table_id IN (" + qSeatTables + ")", []any{id}},
		}
		for _, s := range steps {
			if err := exec(s.q, s.args...); err != nil {
				return err
			}
		}
		for _, b := range backstories {
			esc, _ := json.Marshal(b) // as it stands in a JSON message body
			inBody := strings.Trim(string(esc), `"`)
			if err := exec("UPDATE agent_messages SET body = replace(body, ?2, '') WHERE table_id IN ("+qSeatTables+") AND instr(body, ?2) > 0",
				id, inBody); err != nil {
				return err
			}
			if err := exec(`UPDATE memories SET summary = replace(summary, ?2, ''), title = replace(title, ?2, '')
				WHERE table_id IN (`+qSeatTables+`) AND (instr(summary, ?2) > 0 OR instr(title, ?2) > 0)`, id, b); err != nil {
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
