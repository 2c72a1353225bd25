package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// rowsPerInsert bounds the rows of one INSERT of events, history messages
// or model calls. A turn's rows of each go in one statement (or two)
// instead of one each, which saves the writer a statement's fixed cost
// (binding, running and resetting it) per row.
const rowsPerInsert = 8

var (
	qInsertEvents   = insertSQL("INSERT INTO events (table_id, seq, ts, kind, turn, data) VALUES ", 6)
	qInsertMessages = insertSQL("INSERT INTO agent_messages (table_id, agent, turn, body, created_at) VALUES ", 5)
)

// insertSQL returns the INSERTs of 1 to rowsPerInsert rows of cols
// values each: element n-1 inserts n rows.
func insertSQL(head string, cols int) []string {
	row := "(?" + strings.Repeat(", ?", cols-1) + ")"
	out := make([]string, rowsPerInsert)
	for n := range out {
		out[n] = head + row + strings.Repeat(", "+row, n)
	}
	return out
}

// insertRows inserts n rows with the statements of qs (insertSQL),
// rowsPerInsert at a time, in order; values appends the values of row i.
// On error it returns the first row of the failed statement.
func insertRows(w *writeTx, qs []string, n int, values func(args []any, i int) []any) (int, error) {
	var args []any
	for first := 0; first < n; first += rowsPerInsert {
		end := min(n, first+rowsPerInsert)
		args = args[:0]
		for i := first; i < end; i++ {
			args = values(args, i)
		}
		if _, err := w.exec(qs[end-first-1], args...); err != nil {
			return first, err
		}
	}
	return 0, nil
}

// eventRow is an event's stored text: its time and its data as JSON.
type eventRow struct{ ts, data string }

// eventRows encodes the stored text of evs, in order; encoded, if not
// nil, holds the JSON of each one's data (store.Commit.EventData).
func eventRows(evs []engine.Event, encoded []json.RawMessage) ([]eventRow, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	if encoded != nil && len(encoded) != len(evs) {
		return nil, fmt.Errorf("%d events but the data of %d", len(evs), len(encoded))
	}
	rows := make([]eventRow, len(evs))
	for i, e := range evs {
		var data []byte
		if encoded != nil {
			data = encoded[i]
		} else {
			var err error
			if data, err = json.Marshal(e.Data); err != nil {
				return nil, fmt.Errorf("encode event %d (%s): %w", e.Seq, e.Kind, err)
			}
		}
		rows[i] = eventRow{ts: formatTime(e.TS), data: string(data)}
	}
	return rows, nil
}

// insertEvents stores events as numbered by the caller; a seq that exists
// fails the transaction.
func insertEvents(w *writeTx, tableID string, evs []engine.Event) error {
	rows, err := eventRows(evs, nil)
	if err != nil {
		return err
	}
	return insertEventRows(w, tableID, evs, rows)
}

// insertEventRows stores evs, whose stored text is rows (eventRows).
func insertEventRows(w *writeTx, tableID string, evs []engine.Event, rows []eventRow) error {
	first, err := insertRows(w, qInsertEvents, len(evs), func(args []any, i int) []any {
		e := &evs[i]
		return append(args, tableID, e.Seq, rows[i].ts, string(e.Kind), e.Turn, rows[i].data)
	})
	if err != nil {
		return fmt.Errorf("insert events from %d: %w", evs[first].Seq, err)
	}
	return nil
}

// validMessages returns an EINVALID error if a message body is not JSON.
func validMessages(msgs []store.AgentMessage) error {
	for i, m := range msgs {
		if !json.Valid(m.Body) {
			return engine.Errorf(engine.EINVALID, "message %d of the %s history is not JSON", i, m.Agent)
		}
	}
	return nil
}

// insertMessages stores msgs, whose bodies Commit checked.
func insertMessages(w *writeTx, tableID string, msgs []store.AgentMessage, now string) error {
	first, err := insertRows(w, qInsertMessages, len(msgs), func(args []any, i int) []any {
		m := &msgs[i]
		return append(args, tableID, m.Agent, m.Turn, string(m.Body), now)
	})
	if err != nil {
		return fmt.Errorf("insert %s messages: %w", msgs[first].Agent, err)
	}
	return nil
}

// Events returns up to limit events of a table with seq > since, in seq
// order; none if limit <= 0 or the table does not exist. Data is decoded
// with encoding/json (numbers are float64). The caller owns the result.
// Safe for concurrent use.
func (d *DB) Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []engine.Event
	q := "SELECT seq, ts, kind, turn, data FROM events WHERE table_id = ? AND seq > ? ORDER BY seq LIMIT ?"
	err := each(ctx, d.reader, q, []any{tableID, since, limit}, func(r *sql.Rows) error {
		var e engine.Event
		var ts, data string
		if err := r.Scan(&e.Seq, &ts, &e.Kind, &e.Turn, &data); err != nil {
			return err
		}
		var err error
		if e.TS, err = parseTime(ts); err != nil {
			return fmt.Errorf("event %d: %w", e.Seq, err)
		}
		if e.Data, err = engine.DecodeData(e.Kind, []byte(data)); err != nil {
			return fmt.Errorf("event %d: %w", e.Seq, err)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("events of table %s since %d: %w", tableID, since, err)
	}
	return out, nil
}

// History returns at most the last n messages of an agent's history at a
// table, oldest first, never starting in the middle of a turn: if the cut
// falls inside a turn, that turn's messages before the first whole turn are
// dropped (so a single turn longer than n yields none). It returns none if
// n <= 0 or there is no such history. The caller owns the result. Safe for
// concurrent use.
func (d *DB) History(ctx context.Context, tableID, agent string, n int) ([]store.AgentMessage, error) {
	if n <= 0 {
		return nil, nil
	}
	// One more than asked: the message before the window tells whether the
	// window starts a turn.
	q := "SELECT turn, body FROM (" + wholeHistory + ") ORDER BY id DESC LIMIT ?3"
	out, err := scanMessages(ctx, d.reader, agent, q, []any{tableID, agent, n + 1})
	if err != nil {
		return nil, fmt.Errorf("%s history of table %s: %w", agent, tableID, err)
	}
	slices.Reverse(out)
	if len(out) <= n {
		return out, nil // The whole history: it starts a turn.
	}
	before := out[0]
	out = out[1:]
	for len(out) > 0 && out[0].Turn == before.Turn {
		before, out = out[0], out[1:]
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
