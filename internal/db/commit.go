package db

import (
	"context"
	"fmt"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

const (
	qInsertSeat    = "INSERT INTO seats (table_id, seat, player_id, character_id, joined_at) VALUES (?, ?, ?, ?, ?)"
	qDeleteSeat    = "DELETE FROM seats WHERE table_id = ? AND seat = ?"
	qInsertPending = `INSERT INTO pending_actions (table_id, id, player_id, character_id, seat, client_id, text, status, created_at, kind)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qResolvePending = "UPDATE pending_actions SET status = 'resolved', state = 'resolved', resolved_at = ? WHERE table_id = ? AND id = ? AND status = 'pending'"
	// qAbandonAction closes an action as abandoned: never played, or its
	// turn undone (a retcon). qAbandonPending does so to an open one only.
	qAbandonAction  = "UPDATE pending_actions SET status = 'resolved', state = 'abandoned', resolved_at = ? WHERE table_id = ? AND id = ?"
	qAbandonPending = qAbandonAction + " AND status = 'pending'"
	// qSetActionState leaves closed actions alone: a late state write
	// never reopens what a commit resolved.
	qSetActionState = `UPDATE pending_actions SET state = ?, attempts = ?, last_error = ?
WHERE table_id = ? AND id = ? AND status = 'pending'`
)

// Commit applies c to table c.TableID in ONE transaction: nothing of it is
// written unless all of it is. In order: the new pending action; the state
// (when c.State is not nil it replaces the stored party, world, game state
// and RNG, and the table's Config); the events, numbered by the caller; the
// operator's marks (store.Commit.Paused, ClosedAt); the history messages;
// the seat taken, then the seat left; the pending actions
// resolved (ids that are unknown or already resolved are ignored), then
// those abandoned (likewise); the archive (store.Commit.Archive); the
// actions' lives (closed or unknown actions left alone); the model calls.
//
// It returns an ECONFLICT *engine.Error if c.AddPending duplicates a stored
// (table, player, client id) or action id, or c.AddSeat a taken seat or a
// seated player; ENOTFOUND if the table does not exist; EINVALID for a
// message body that is not JSON or a relationship key without "|";
// ECONFLICT if c.Archive finds no active message to archive. An
// event seq that exists is an internal error. Safe for concurrent use.
//
// Commits are group-committed: one writer goroutine takes whatever commits
// are queued and applies them in one transaction, in the order they
// arrived, and Commit returns once the transaction holding c is durable
// (or failed); a chat line or an operator's mark that finds the writer
// idle is applied by its caller instead (applyNow). A commit that fails
// does not fail the others of its batch: the batch is rolled back and each
// of its commits is retried alone. ctx bounds the wait for a place in the
// queue; once queued, c is applied and Commit waits for the result. After
// Close, Commit fails.
//
// c.State, once queued, belongs to the store: the caller must not change
// it, nor anything it points to, ever after. The store keeps it (not a
// copy) as what table c.TableID's rows hold, and the table's next commit
// writes only the rows its state changed from it; so a caller builds each
// new state on a Clone of the last. Handing the same *State again is
// allowed and writes every row.
func (d *DB) Commit(ctx context.Context, c store.Commit) error {
	return d.groupCommit(ctx, c)
}

// encodedRows is the text of a commit's rows that Enqueue encodes on its
// caller's goroutine, so that the writer, whose time every commit shares,
// does not: the JSON of its events' data (a fifth of their cost on the
// writer) and of its state's game and RNG.
type encodedRows struct {
	events []eventRow
	game   gameRow // of c.State, if set
}

// encodeRows encodes the rows of c (encodedRows).
func encodeRows(c store.Commit) (*encodedRows, error) {
	events, err := eventRows(c.Events, c.EventData)
	if err != nil {
		return nil, err
	}
	rows := &encodedRows{events: events}
	if c.State != nil {
		rows.game = gameRowOf(c.State)
	}
	return rows, nil
}

// applyCommit runs the statements of c in w's transaction (see Commit); at
// stamps the rows. rows is the text of c's rows (encodeRows), or nil to
// encode it here.
func applyCommit(w *writeTx, c store.Commit, rows *encodedRows, at time.Time) error {
	if rows == nil {
		var err error
		if rows, err = encodeRows(c); err != nil {
			return err
		}
	}
	now := formatTime(at)
	if p := c.AddPending; p != nil {
		status := p.Status
		if status == "" {
			status = engine.ActionPending
		}
		_, err := w.exec(qInsertPending, c.TableID, p.ID, p.PlayerID, p.CharacterID, p.Seat, p.ClientID,
			p.Text, status, formatTime(p.CreatedAt), p.Kind)
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "action %s (client id %s) was already received", p.ID, p.ClientID)
		}
		if err != nil {
			return fmt.Errorf("insert pending action %s: %w", p.ID, err)
		}
	}
	if c.State != nil {
		prev := w.written(c.TableID)
		if prev == c.State {
			// Handed over again: it may have changed since, so what the
			// rows hold is not known.
			prev = nil
		}
		if err := writeEncodedState(w, c.TableID, c.State, prev, rows.game, now); err != nil {
			return err
		}
		w.wrote(c.TableID, c.State)
	}
	if err := insertEventRows(w, c.TableID, c.Events, rows.events); err != nil {
		return err
	}
	if err := setTableMarks(w, c); err != nil {
		return err
	}
	if err := setOwnerMarks(w, c); err != nil { // owners.go
		return err
	}
	if err := insertMessages(w, c.TableID, c.Messages, now); err != nil {
		return err
	}
	if s := c.AddSeat; s != nil {
		_, err := w.exec(qInsertSeat, c.TableID, s.Seat, s.PlayerID, s.CharacterID, formatTime(s.JoinedAt))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "seat %s is taken or player %s is already seated", s.Seat, s.PlayerID)
		}
		if err != nil {
			return fmt.Errorf("insert seat %s: %w", s.Seat, err)
		}
	}
	if c.RemoveSeat != "" {
		if _, err := w.exec(qDeleteSeat, c.TableID, c.RemoveSeat); err != nil {
			return fmt.Errorf("delete seat %s: %w", c.RemoveSeat, err)
		}
	}
	for _, id := range c.Resolve {
		if _, err := w.exec(qResolvePending, now, c.TableID, id); err != nil {
			return fmt.Errorf("resolve action %s: %w", id, err)
		}
	}
	for _, id := range c.Abandon {
		if _, err := w.exec(qAbandonPending, now, c.TableID, id); err != nil {
			return fmt.Errorf("abandon action %s: %w", id, err)
		}
	}
	// Before the archive: a save point records the memories before it.
	if err := applyOwner(w, c, now); err != nil {
		return err
	}
	if c.Archive != nil {
		if err := archive(w, c.TableID, c.Archive, at); err != nil {
			return err
		}
	}
	for _, a := range c.Lives {
		if err := setActionState(w, c.TableID, a); err != nil {
			return err
		}
	}
	return insertCalls(w, c.Calls)
}

func setActionState(w *writeTx, tableID string, a store.ActionLife) error {
	if _, err := w.exec(qSetActionState, a.State, a.Attempts, a.Error, tableID, a.ActionID); err != nil {
		return fmt.Errorf("set state of action %s: %w", a.ActionID, err)
	}
	return nil
}

// commitError maps the error of applying c to what Commit returns.
func commitError(c store.Commit, err error) error {
	if err == nil {
		return nil
	}
	if c.TableID == "" { // only model calls, which name no stored table
		return err
	}
	if isForeignKey(err) {
		err = tableNotFound(c.TableID)
	}
	return fmt.Errorf("commit to table %s: %w", c.TableID, err)
}
