package pgdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The table's notes, the owner's whispers, the players' scores of
// narrations and the save points a retcon goes back to: the twin of
// internal/db's owner.go (migrations 0014, 0015), same semantics.

const (
	qInsertNote    = "INSERT INTO notes (table_id, id, text, author, author_name, created_at) VALUES ($1, $2, $3, $4, $5, $6)"
	qDeleteNote    = "DELETE FROM notes WHERE table_id = $1 AND id = $2"
	qInsertWhisper = "INSERT INTO whispers (table_id, text, author, created_at) VALUES ($1, $2, $3, $4) RETURNING id"
	qUseWhispers   = "UPDATE whispers SET used_turn = $1 WHERE table_id = $2 AND id = ANY($3::bigint[]) AND used_turn IS NULL"
	qInsertPoint   = `INSERT INTO retcon_points (table_id, turn, action, from_seq, state, memories_before, created_at)
VALUES ($1, $2, $3, $4, $5, (SELECT coalesce(max(id), 0) FROM memories WHERE table_id = $1), $6)
ON CONFLICT (table_id, turn) DO UPDATE SET action = excluded.action, from_seq = excluded.from_seq,
state = excluded.state, memories_before = excluded.memories_before, created_at = excluded.created_at`
	// qTrimPoints keeps a table's last store.MaxSavePoints save points:
	// it deletes from the newest one past them down, found by one step
	// back along the primary key (a NOT IN over the kept ones cost six
	// times as much on every turn).
	qTrimPoints = `DELETE FROM retcon_points WHERE table_id = $1 AND turn <=
(SELECT turn FROM retcon_points WHERE table_id = $1 ORDER BY turn DESC LIMIT 1 OFFSET $2)`
	// qEditMessage replaces the body of the $4-th message (from 0, by id)
	// of an agent's turn.
	qEditMessage = `UPDATE agent_messages SET body = $1 WHERE id = (SELECT id FROM agent_messages
WHERE table_id = $2 AND agent = $3 AND turn = $4 ORDER BY id LIMIT 1 OFFSET $5)`
	// qRetracted counts the retcons after narration $2 whose range holds
	// it: engine.RetconData.Retracted for a narration, which no kind
	// exempts.
	qRetracted = `SELECT count(*) FROM events WHERE table_id = $1 AND kind = 'retcon' AND seq > $2
AND (data::jsonb->>'from_seq')::bigint <= $2 AND (data::jsonb->>'to_seq')::bigint >= $2`
	// qInsertFeedback finds the call that made the narration as it stores
	// the score: the last successful call of its agent in its turn.
	qInsertFeedback = `INSERT INTO feedback (table_id, seq, player_id, score, comment, turn, agent, call_id, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7,
	(SELECT id FROM llm_calls WHERE table_id = $1 AND turn = $6 AND agent = $7 AND error = '' ORDER BY id DESC LIMIT 1), $8)
ON CONFLICT (table_id, seq, player_id) DO UPDATE SET
score = excluded.score, comment = excluded.comment, call_id = excluded.call_id, created_at = excluded.created_at`
)

// applyOwner queues the statements of c.Owner on t, in internal/db's
// order: notes, whispers, the retcon, the save point, feedback, the edit.
func applyOwner(t *btx, c store.Commit, now string) error {
	o := c.Owner
	if o == nil {
		return nil
	}
	id := c.TableID
	if n := o.AddNote; n != nil {
		t.exec(qInsertNote, []any{id, n.ID, n.Text, n.By, n.ByName, formatTime(n.CreatedAt)}, wrapErr("insert note"))
	}
	if o.RemoveNote != "" {
		t.exec(qDeleteNote, []any{id, o.RemoveNote}, wrapErr("delete note"))
	}
	if wh := o.AddWhisper; wh != nil {
		t.queryRow(qInsertWhisper, []any{id, wh.Text, wh.By, formatTime(wh.CreatedAt)}, func(r pgx.Row) error {
			var wid int64
			if err := r.Scan(&wid); err != nil {
				return fmt.Errorf("insert whisper: %w", err)
			}
			t.afterCommit(func() { wh.ID = wid })
			return nil
		})
	}
	if len(o.UseWhispers) > 0 {
		turn := 0
		if c.State != nil {
			turn = c.State.Game.Turn
		}
		t.exec(qUseWhispers, []any{turn, id, o.UseWhispers}, wrapErr("use whispers"))
	}
	if r := o.Retcon; r != nil {
		retcon(t, id, r, now)
	}
	if p := o.Save; p != nil {
		action, err := json.Marshal(p.Action)
		if err != nil {
			return err
		}
		t.exec(qInsertPoint, []any{id, p.Turn, string(action), p.FromSeq, string(p.State), now},
			wrapErr(fmt.Sprintf("save point of turn %d", p.Turn)))
		t.exec(qTrimPoints, []any{id, store.MaxSavePoints}, wrapErr("trim save points"))
	}
	if f := o.Feedback; f != nil {
		t.exec(qInsertFeedback, []any{f.TableID, f.Seq, f.PlayerID, f.Score, f.Comment, f.Turn, f.Agent, formatTime(f.At)},
			wrapErr("insert feedback"))
	}
	if seq := o.EditOf; seq > 0 {
		t.queryRowJudged(qRetracted, []any{id, seq}, func(r pgx.Row) error {
			var n int
			if err := r.Scan(&n); err != nil {
				return fmt.Errorf("is narration %d retracted: %w", seq, err)
			}
			if n > 0 {
				return store.ErrRetracted(seq)
			}
			return nil
		})
	}
	if e := o.Edit; e != nil {
		if !json.Valid(e.Body) {
			return engine.Errorf(engine.EINVALID, "the edited message is not JSON")
		}
		t.exec(qEditMessage, []any{string(e.Body), id, e.Agent, e.Turn, e.Index}, func(ct pgconn.CommandTag, err error) error {
			if err != nil {
				return fmt.Errorf("edit message: %w", err)
			}
			if ct.RowsAffected() == 0 {
				return store.ErrNoMessage(e)
			}
			return nil
		})
	}
	return nil
}

// retcon queues the undoing of turns r.Turn and after: their history
// messages and the memories archived since go, then the save points; the
// action opens again or is marked abandoned. The save point is read
// first, and its absence fails the transaction, so that a retcon without
// one writes nothing; the statements after it read it again in SQL, as a
// batch's arguments are fixed when it is queued.
func retcon(t *btx, id string, r *store.Retcon, now string) {
	t.queryRowJudged("SELECT memories_before FROM retcon_points WHERE table_id = $1 AND turn = $2", []any{id, r.Turn}, func(row pgx.Row) error {
		var before int64
		err := row.Scan(&before)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNoSavePoint(r.Turn)
		}
		if err != nil {
			return fmt.Errorf("save point of turn %d: %w", r.Turn, err)
		}
		return nil
	})
	what := fmt.Sprintf("retcon turn %d", r.Turn)
	t.exec(`DELETE FROM memories WHERE table_id = $1 AND id >
	(SELECT memories_before FROM retcon_points WHERE table_id = $1 AND turn = $2)`, []any{id, r.Turn}, wrapErr(what))
	t.exec("DELETE FROM agent_messages WHERE table_id = $1 AND turn >= $2", []any{id, r.Turn}, wrapErr(what))
	t.exec("DELETE FROM retcon_points WHERE table_id = $1 AND turn >= $2", []any{id, r.Turn}, wrapErr(what))
	t.exec("UPDATE whispers SET used_turn = NULL WHERE table_id = $1 AND used_turn >= $2", []any{id, r.Turn}, wrapErr(what))
	if r.ActionID == "" {
		return
	}
	q := `UPDATE pending_actions SET status = 'pending', state = 'pending', attempts = 0, last_error = '', resolved_at = NULL
WHERE table_id = $1 AND id = $2`
	args := []any{id, r.ActionID}
	if !r.Reopen {
		q, args = qAbandonActions, []any{now, id, []string{r.ActionID}}
	}
	t.exec(q, args, func(_ pgconn.CommandTag, err error) error {
		if err != nil {
			return fmt.Errorf("retcon action %s: %w", r.ActionID, err)
		}
		return nil
	})
}

// OwnerData returns table tableID's notes, the whispers no turn read yet
// and its save points, each oldest first, from one snapshot.
func (d *DB) OwnerData(ctx context.Context, tableID string) (store.OwnerData, error) {
	var out store.OwnerData
	err := d.read(ctx, func(tx pgx.Tx) error {
		err := each(ctx, tx, "SELECT id, text, author, author_name, created_at FROM notes WHERE table_id = $1 ORDER BY created_at, id", []any{tableID}, func(r pgx.Rows) error {
			var n store.Note
			var at string
			if err := r.Scan(&n.ID, &n.Text, &n.By, &n.ByName, &at); err != nil {
				return err
			}
			var err error
			n.CreatedAt, err = parseTime(at)
			out.Notes = append(out.Notes, n)
			return err
		})
		if err != nil {
			return err
		}
		err = each(ctx, tx, `SELECT id, text, author, created_at, used_turn FROM whispers WHERE table_id = $1
AND (used_turn IS NULL OR used_turn >= (SELECT min(turn) FROM retcon_points WHERE table_id = $1)) ORDER BY id`, []any{tableID}, func(r pgx.Rows) error {
			var wh store.Whisper
			var at string
			var used *int64
			if err := r.Scan(&wh.ID, &wh.Text, &wh.By, &at, &used); err != nil {
				return err
			}
			var err error
			wh.CreatedAt, err = parseTime(at)
			if used != nil {
				wh.UsedTurn = int(*used)
				out.Read = append(out.Read, wh)
			} else {
				out.Whispers = append(out.Whispers, wh)
			}
			return err
		})
		if err != nil {
			return err
		}
		return each(ctx, tx, "SELECT turn, action, from_seq, state FROM retcon_points WHERE table_id = $1 ORDER BY turn", []any{tableID}, func(r pgx.Rows) error {
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
		return store.OwnerData{}, fmt.Errorf("notes and save points of %s: %w", tableID, withUnavailable(err))
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

// FeedbackGroups returns the players' scores given since since, by the
// model and prompt version of the call that made each narration
// (feedback.call_id).
func (d *DB) FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error) {
	var out []store.FeedbackGroup
	err := each(ctx, d.pool, `SELECT coalesce(c.model, ''), coalesce(c.prompt_version, ''),
	count(*) FILTER (WHERE f.score > 0), count(*) FILTER (WHERE f.score < 0)
FROM feedback f LEFT JOIN llm_calls c ON c.id = f.call_id
WHERE f.created_at >= $1
GROUP BY 1, 2 ORDER BY 1, 2`, []any{formatTime(since)}, func(r pgx.Rows) error {
		var g store.FeedbackGroup
		err := r.Scan(&g.Model, &g.PromptVersion, &g.Up, &g.Down)
		out = append(out, g)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("feedback groups: %w", withUnavailable(err))
	}
	return out, nil
}
