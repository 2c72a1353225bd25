package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The table's notes, the owner's whispers, the players' scores of
// narrations, and the save points a retcon goes back to (PROTOCOL.md
// "Undo, notes and the owner's word to the DM"; migrations 0014, 0015).

const (
	qInsertNote    = "INSERT INTO notes (table_id, id, text, author, author_name, created_at) VALUES (?, ?, ?, ?, ?, ?)"
	qDeleteNote    = "DELETE FROM notes WHERE table_id = ? AND id = ?"
	qInsertWhisper = "INSERT INTO whispers (table_id, text, author, created_at) VALUES (?, ?, ?, ?)"
	qUseWhisper    = "UPDATE whispers SET used_turn = ? WHERE table_id = ? AND id = ? AND used_turn IS NULL"
	qInsertPoint   = `INSERT INTO retcon_points (table_id, turn, action, from_seq, state, memories_before, created_at)
VALUES (?, ?, ?, ?, ?, (SELECT COALESCE(MAX(id), 0) FROM memories WHERE table_id = ?), ?)
ON CONFLICT (table_id, turn) DO UPDATE SET action = excluded.action, from_seq = excluded.from_seq,
state = excluded.state, memories_before = excluded.memories_before, created_at = excluded.created_at`
	// qTrimPoints keeps a table's last store.MaxSavePoints save points:
	// it deletes from the newest one past them down, found by one step
	// back along the primary key (a NOT IN over the kept ones cost six
	// times as much on every turn).
	qTrimPoints = `DELETE FROM retcon_points WHERE table_id = ? AND turn <=
(SELECT turn FROM retcon_points WHERE table_id = ? ORDER BY turn DESC LIMIT 1 OFFSET ?)`
)

// qRetracted counts the retcons after narration ? whose range holds it:
// engine.RetconData.Retracted for a narration, which no kind exempts.
const qRetracted = `SELECT count(*) FROM events WHERE table_id = ? AND kind = 'retcon' AND seq > ?
AND json_extract(data, '$.from_seq') <= ? AND json_extract(data, '$.to_seq') >= ?`

// qOwnerWhispers reads the whispers waiting and those read by a turn a
// retcon can still undo (store.OwnerData.Read).
const qOwnerWhispers = `SELECT id, text, author, created_at, used_turn FROM whispers WHERE table_id = ?
AND (used_turn IS NULL OR used_turn >= (SELECT min(turn) FROM retcon_points WHERE table_id = ?)) ORDER BY id`

// ownerWriteQueries are prepared with the other write statements: a save
// point is written with every turn that resolves a player action.
var ownerWriteQueries = []string{qInsertPoint, qTrimPoints}

// applyOwner runs the statements of c.Owner in w's transaction.
func applyOwner(w *writeTx, c store.Commit, now string) error {
	o := c.Owner
	if o == nil {
		return nil
	}
	if n := o.AddNote; n != nil {
		if _, err := w.conn.ExecContext(w.ctx, qInsertNote, c.TableID, n.ID, n.Text, n.By, n.ByName, formatTime(n.CreatedAt)); err != nil {
			return fmt.Errorf("insert note: %w", err)
		}
	}
	if o.RemoveNote != "" {
		if _, err := w.conn.ExecContext(w.ctx, qDeleteNote, c.TableID, o.RemoveNote); err != nil {
			return fmt.Errorf("delete note: %w", err)
		}
	}
	if wh := o.AddWhisper; wh != nil {
		res, err := w.conn.ExecContext(w.ctx, qInsertWhisper, c.TableID, wh.Text, wh.By, formatTime(wh.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert whisper: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		w.afterCommit(func() { wh.ID = id })
	}
	turn := 0
	if c.State != nil {
		turn = c.State.Game.Turn
	}
	for _, id := range o.UseWhispers {
		if _, err := w.conn.ExecContext(w.ctx, qUseWhisper, turn, c.TableID, id); err != nil {
			return fmt.Errorf("use whisper %d: %w", id, err)
		}
	}
	if r := o.Retcon; r != nil {
		if err := retcon(w, c.TableID, r, now); err != nil {
			return err
		}
	}
	if p := o.Save; p != nil {
		action, err := json.Marshal(p.Action)
		if err != nil {
			return err
		}
		if _, err := w.exec(qInsertPoint, c.TableID, p.Turn, string(action), p.FromSeq, string(p.State), c.TableID, now); err != nil {
			return fmt.Errorf("save point of turn %d: %w", p.Turn, err)
		}
		if _, err := w.exec(qTrimPoints, c.TableID, c.TableID, store.MaxSavePoints); err != nil {
			return fmt.Errorf("trim save points: %w", err)
		}
	}
	if f := o.Feedback; f != nil {
		if err := insertFeedback(w, f); err != nil {
			return err
		}
	}
	if seq := o.EditOf; seq > 0 {
		var n int
		if err := w.conn.QueryRowContext(w.ctx, qRetracted, c.TableID, seq, seq, seq).Scan(&n); err != nil {
			return fmt.Errorf("is narration %d retracted: %w", seq, err)
		}
		if n > 0 {
			return store.ErrRetracted(seq)
		}
	}
	if e := o.Edit; e != nil {
		if !json.Valid(e.Body) {
			return engine.Errorf(engine.EINVALID, "the edited message is not JSON")
		}
		res, err := w.conn.ExecContext(w.ctx, `UPDATE agent_messages SET body = ? WHERE id = (SELECT id FROM agent_messages
			WHERE table_id = ? AND agent = ? AND turn = ? ORDER BY id LIMIT 1 OFFSET ?)`, string(e.Body), c.TableID, e.Agent, e.Turn, e.Index)
		if err != nil {
			return fmt.Errorf("edit message: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("edit message: %w", err)
		} else if n == 0 {
			return store.ErrNoMessage(e)
		}
	}
	return nil
}

// retcon undoes turns r.Turn and after in the store: their history
// messages and the memories archived since go, then the save point; the
// action opens again or is marked abandoned.
func retcon(w *writeTx, tableID string, r *store.Retcon, now string) error {
	var before int64
	err := w.conn.QueryRowContext(w.ctx, "SELECT memories_before FROM retcon_points WHERE table_id = ? AND turn = ?", tableID, r.Turn).Scan(&before)
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNoSavePoint(r.Turn)
	}
	if err != nil {
		return fmt.Errorf("save point of turn %d: %w", r.Turn, err)
	}
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DELETE FROM memories WHERE table_id = ? AND id > ?", []any{tableID, before}},
		{"DELETE FROM agent_messages WHERE table_id = ? AND turn >= ?", []any{tableID, r.Turn}},
		{"DELETE FROM retcon_points WHERE table_id = ? AND turn >= ?", []any{tableID, r.Turn}},
		{"UPDATE whispers SET used_turn = NULL WHERE table_id = ? AND used_turn >= ?", []any{tableID, r.Turn}},
	} {
		if _, err := w.conn.ExecContext(w.ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("retcon turn %d: %w", r.Turn, err)
		}
	}
	if r.ActionID == "" {
		return nil
	}
	q := `UPDATE pending_actions SET status = 'pending', state = 'pending', attempts = 0, last_error = '', resolved_at = NULL
		WHERE table_id = ? AND id = ?`
	args := []any{tableID, r.ActionID}
	if !r.Reopen {
		q, args = qAbandonAction, []any{now, tableID, r.ActionID}
	}
	if _, err := w.conn.ExecContext(w.ctx, q, args...); err != nil {
		return fmt.Errorf("retcon action %s: %w", r.ActionID, err)
	}
	return nil
}

// OwnerData returns table tableID's notes (oldest first), the whispers no
// turn read yet (oldest first) and its save points (oldest first).
func (d *DB) OwnerData(ctx context.Context, tableID string) (store.OwnerData, error) {
	var out store.OwnerData
	err := d.read(ctx, func(tx *sql.Tx) error {
		err := each(ctx, tx, "SELECT id, text, author, author_name, created_at FROM notes WHERE table_id = ? ORDER BY created_at, id", []any{tableID}, func(r *sql.Rows) error {
			var n store.Note
			var at string
			if err := r.Scan(&n.ID, &n.Text, &n.By, &n.ByName, &at); err != nil {
				return err
			}
			t, err := parseTime(at)
			n.CreatedAt = t
			out.Notes = append(out.Notes, n)
			return err
		})
		if err != nil {
			return err
		}
		err = each(ctx, tx, qOwnerWhispers, []any{tableID, tableID}, func(r *sql.Rows) error {
			var wh store.Whisper
			var at string
			var used sql.NullInt64
			if err := r.Scan(&wh.ID, &wh.Text, &wh.By, &at, &used); err != nil {
				return err
			}
			t, err := parseTime(at)
			wh.CreatedAt = t
			if used.Valid {
				wh.UsedTurn = int(used.Int64)
				out.Read = append(out.Read, wh)
			} else {
				out.Whispers = append(out.Whispers, wh)
			}
			return err
		})
		if err != nil {
			return err
		}
		return each(ctx, tx, "SELECT turn, action, from_seq, state FROM retcon_points WHERE table_id = ? ORDER BY turn", []any{tableID}, func(r *sql.Rows) error {
			var p store.SavePoint
			var action, state string
			if err := r.Scan(&p.Turn, &action, &p.FromSeq, &state); err != nil {
				return err
			}
			p.State = json.RawMessage(state)
			err := unjson(action, &p.Action, "save point action")
			out.Points = append(out.Points, p)
			return err
		})
	})
	if err != nil {
		return store.OwnerData{}, fmt.Errorf("notes and save points of %s: %w", tableID, err)
	}
	return out, nil
}

// SetFeedback stores a player's score of a narration, replacing the one
// they gave before.
func (d *DB) SetFeedback(ctx context.Context, f store.Feedback) error {
	err := d.Commit(ctx, store.Commit{TableID: f.TableID, Owner: &store.OwnerChange{Feedback: &f}})
	if err != nil {
		return fmt.Errorf("feedback on %s event %d: %w", f.TableID, f.Seq, err)
	}
	return nil
}

func insertFeedback(w *writeTx, f *store.Feedback) error {
	_, err := w.conn.ExecContext(w.ctx, `INSERT INTO feedback (table_id, seq, player_id, score, comment, turn, agent, call_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, (SELECT id FROM llm_calls WHERE table_id = ? AND turn = ? AND agent = ? AND error = '' ORDER BY id DESC LIMIT 1), ?)
		ON CONFLICT (table_id, seq, player_id) DO UPDATE SET
		score = excluded.score, comment = excluded.comment, call_id = excluded.call_id, created_at = excluded.created_at`,
		f.TableID, f.Seq, f.PlayerID, f.Score, f.Comment, f.Turn, f.Agent, f.TableID, f.Turn, f.Agent, formatTime(f.At))
	if err != nil {
		return fmt.Errorf("insert feedback: %w", err)
	}
	return nil
}

// FeedbackGroups returns the players' scores given since since, by the
// model and prompt version of the call that made each narration
// (feedback.call_id).
func (d *DB) FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error) {
	var out []store.FeedbackGroup
	err := each(ctx, d.reader, `SELECT COALESCE(c.model, ''), COALESCE(c.prompt_version, ''),
		SUM(f.score > 0), SUM(f.score < 0)
		FROM feedback f LEFT JOIN llm_calls c ON c.id = f.call_id
		WHERE f.created_at >= ?
		GROUP BY 1, 2 ORDER BY 1, 2`, []any{formatTime(since)}, func(r *sql.Rows) error {
		var g store.FeedbackGroup
		err := r.Scan(&g.Model, &g.PromptVersion, &g.Up, &g.Down)
		out = append(out, g)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("feedback groups: %w", err)
	}
	return out, nil
}
