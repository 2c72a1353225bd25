package pgdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Events returns up to limit events of a table with seq > since, in seq
// order (db.DB.Events' contract).
func (d *DB) Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []engine.Event
	q := "SELECT seq, ts, kind, turn, data FROM events WHERE table_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
	err := each(ctx, d.pool, q, []any{tableID, since, limit}, func(r pgx.Rows) error {
		var e engine.Event
		var ts, kind, data string
		if err := r.Scan(&e.Seq, &ts, &kind, &e.Turn, &data); err != nil {
			return err
		}
		e.Kind = engine.Kind(kind)
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

// Archives are a prefix of a history by turn (migration 0012): a message
// is archived if its turn is at most the last turn of a memory of its
// table and agent.
const (
	noTurn           = "-2147483648"
	lastArchivedTurn = "coalesce((SELECT max(last_turn) FROM memories WHERE table_id = $1 AND agent = $2), " + noTurn + ")"
	qActiveHistory   = "SELECT turn, body FROM agent_messages WHERE table_id = $1 AND agent = $2 AND turn > " + lastArchivedTurn + " ORDER BY id DESC"
	qMemoryMessages  = `SELECT turn, body FROM agent_messages
WHERE table_id = $1 AND agent = $2 AND turn <= $3
AND turn > coalesce((SELECT max(last_turn) FROM memories WHERE table_id = $1 AND agent = $2 AND last_turn < $3), ` + noTurn + `)
ORDER BY id`
	// qArchive inserts the memory of the active messages up to turn $3
	// with its final counts, and returns its id, its turns and count. It
	// refuses the commit when the table does not exist or has no such
	// message.
	qArchive = `WITH r AS (
	SELECT count(*) AS n, coalesce(min(turn), 0) AS f, coalesce(max(turn), 0) AS l FROM agent_messages
	WHERE table_id = $1 AND agent = $2 AND turn > ` + lastArchivedTurn + ` AND turn <= $3),
ins AS (
	INSERT INTO memories (table_id, agent, first_turn, last_turn, messages, title, summary, keywords, source, created_at)
	SELECT $1, $2, r.f, r.l, r.n, $4, $5, $6, $7, $8 FROM r WHERE r.n > 0
	RETURNING id)
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM tables WHERE id = $1) THEN ` + refusalNoTableSQL + `
	WHEN r.n = 0 THEN ` + refusalNoRowsSQL + ` ELSE (SELECT id FROM ins) END, r.f, r.l, r.n FROM r`
)

// ActiveHistory returns the active messages of an agent's history, oldest
// first, at most the last limit (<= 0: all), never starting mid-turn.
func (d *DB) ActiveHistory(ctx context.Context, tableID, agentName string, limit int) ([]store.AgentMessage, error) {
	q := qActiveHistory
	args := []any{tableID, agentName}
	if limit > 0 {
		q += " LIMIT $3"
		args = append(args, limit+1)
	}
	out, err := scanMessages(ctx, d.pool, agentName, q, args)
	if err != nil {
		return nil, fmt.Errorf("active %s history of table %s: %w", agentName, tableID, err)
	}
	slices.Reverse(out)
	if limit <= 0 || len(out) <= limit {
		return out, nil
	}
	before := out[0]
	out = out[1:]
	for len(out) > 0 && out[0].Turn == before.Turn {
		out = out[1:]
	}
	return out, nil
}

// AllHistory returns every message of an agent's history, oldest first.
func (d *DB) AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error) {
	out, err := scanMessages(ctx, d.pool, agentName, "SELECT turn, body FROM agent_messages WHERE table_id = $1 AND agent = $2 ORDER BY id", []any{tableID, agentName})
	if err != nil {
		return nil, fmt.Errorf("%s history of table %s: %w", agentName, tableID, err)
	}
	return out, nil
}

// History returns at most the last n messages of an agent's history,
// oldest first, never starting mid-turn (db.DB.History's contract).
func (d *DB) History(ctx context.Context, tableID, agentName string, n int) ([]store.AgentMessage, error) {
	if n <= 0 {
		return nil, nil
	}
	out, err := scanMessages(ctx, d.pool, agentName, "SELECT turn, body FROM agent_messages WHERE table_id = $1 AND agent = $2 ORDER BY id DESC LIMIT $3", []any{tableID, agentName, n + 1})
	if err != nil {
		return nil, fmt.Errorf("%s history of table %s: %w", agentName, tableID, err)
	}
	slices.Reverse(out)
	if len(out) <= n {
		return out, nil
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

func scanMessages(ctx context.Context, q querier, agentName, query string, args []any) ([]store.AgentMessage, error) {
	var out []store.AgentMessage
	err := each(ctx, q, query, args, func(r pgx.Rows) error {
		m := store.AgentMessage{Agent: agentName}
		var body string
		if err := r.Scan(&m.Turn, &body); err != nil {
			return err
		}
		m.Body = json.RawMessage(body)
		out = append(out, m)
		return nil
	})
	return out, err
}

// ArchiveHistory stores m as a new memory and moves the active messages
// up to m.LastTurn into it, in one group commit (db.DB.ArchiveHistory's
// contract).
func (d *DB) ArchiveHistory(ctx context.Context, m store.Memory) (store.Memory, error) {
	if err := d.Commit(ctx, store.Commit{TableID: m.TableID, Archive: &m}); err != nil {
		return store.Memory{}, fmt.Errorf("archive %s history of table %s: %w", m.Agent, m.TableID, err)
	}
	return m, nil
}

// archive queues a commit's Archive and, once t commits, fills *m with
// the memory as stored.
func archive(t *btx, tableID string, m *store.Memory, at time.Time) {
	stored := *m
	stored.TableID, stored.CreatedAt = tableID, at.UTC()
	if stored.Keywords == nil {
		stored.Keywords = []string{}
	}
	args := []any{tableID, stored.Agent, stored.LastTurn, stored.Title, stored.Summary, plainJSON(stored.Keywords),
		stored.Source, formatTime(stored.CreatedAt)}
	t.queryRow(qArchive, args, func(r pgx.Row) error {
		err := r.Scan(&stored.ID, &stored.FirstTurn, &stored.LastTurn, &stored.Messages)
		switch pgCode(err) {
		case "":
		case refusalNoTable:
			return tableNotFound(tableID)
		case refusalNoRows:
			return engine.Errorf(engine.ECONFLICT, "no active %s message in turns %d-%d", m.Agent, m.FirstTurn, m.LastTurn)
		}
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		return nil
	})
	t.afterCommit(func() { *m = stored })
}

// UpdateMemory replaces a memory's title, summary, keywords and source.
// ENOTFOUND if the table has no such memory.
func (d *DB) UpdateMemory(ctx context.Context, m store.Memory) error {
	if m.Keywords == nil {
		m.Keywords = []string{}
	}
	ct, err := d.pool.Exec(ctx, "UPDATE memories SET title = $1, summary = $2, keywords = $3, source = $4 WHERE id = $5 AND table_id = $6",
		m.Title, m.Summary, plainJSON(m.Keywords), m.Source, m.ID, m.TableID)
	if err != nil {
		return fmt.Errorf("update memory %d: %w", m.ID, err)
	}
	if ct.RowsAffected() == 0 {
		return fmt.Errorf("update memory %d: %w", m.ID, engine.Errorf(engine.ENOTFOUND, "memory %d not found", m.ID))
	}
	return nil
}

const memoryCols = "m.id, m.table_id, m.agent, m.first_turn, m.last_turn, m.messages, m.title, m.summary, m.keywords, m.source, m.created_at"

func scanMemory(r pgx.Row) (store.Memory, error) {
	var m store.Memory
	var kw, created string
	if err := r.Scan(&m.ID, &m.TableID, &m.Agent, &m.FirstTurn, &m.LastTurn, &m.Messages, &m.Title, &m.Summary, &kw, &m.Source, &created); err != nil {
		return m, err
	}
	if err := unjson(kw, &m.Keywords, "keywords"); err != nil {
		return m, err
	}
	t, err := parseTime(created)
	m.CreatedAt = t
	return m, err
}

// Memories returns the last limit memories of a table (<= 0: all), of
// one agent or of both when agentName is "", oldest first.
func (d *DB) Memories(ctx context.Context, tableID, agentName string, limit int) ([]store.Memory, error) {
	q := "SELECT " + memoryCols + " FROM memories m WHERE m.table_id = $1 AND ($2 = '' OR m.agent = $2) ORDER BY m.id DESC"
	args := []any{tableID, agentName}
	if limit > 0 {
		q += " LIMIT $3"
		args = append(args, limit)
	}
	var out []store.Memory
	err := each(ctx, d.pool, q, args, func(r pgx.Rows) error {
		m, err := scanMemory(r)
		out = append(out, m)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("memories of table %s: %w", tableID, err)
	}
	slices.Reverse(out)
	return out, nil
}

// tsQuery turns free text into a to_tsquery query: its words (letters and
// digits only, so no query syntax gets through), each a prefix match, any
// of them matching; "" if there is no word.
func tsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var parts []string
	for _, w := range words {
		if len(parts) == 16 {
			break
		}
		parts = append(parts, w+":*")
	}
	return strings.Join(parts, " | ")
}

// SearchMemories implements the agent package's MemoryIndex: full-text
// search (the generated tsvector memories.search, English stemming,
// prefix matches) over the titles, keywords and summaries of a table's
// memories, best first. A query without any word matches nothing.
func (d *DB) SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error) {
	tq := tsQuery(query)
	if tq == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 10
	}
	q := "SELECT " + memoryCols + ` FROM memories m, to_tsquery('english', $1) q
		WHERE m.table_id = $2 AND m.search @@ q ORDER BY ts_rank(m.search, q) DESC, m.id DESC LIMIT $3`
	var out []store.Memory
	err := each(ctx, d.pool, q, []any{tq, tableID, limit}, func(r pgx.Rows) error {
		m, err := scanMemory(r)
		out = append(out, m)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search memories of table %s: %w", tableID, err)
	}
	return out, nil
}

// MemorySession implements the agent package's MemoryIndex: one memory of
// a table and its archived messages, or an engine ENOTFOUND error.
func (d *DB) MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error) {
	var m store.Memory
	var msgs []store.AgentMessage
	err := d.read(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = scanMemory(tx.QueryRow(ctx, "SELECT "+memoryCols+" FROM memories m WHERE m.id = $1 AND m.table_id = $2", id, tableID))
		if errors.Is(err, pgx.ErrNoRows) {
			return engine.Errorf(engine.ENOTFOUND, "session %d not found", id)
		}
		if err != nil {
			return err
		}
		return each(ctx, tx, qMemoryMessages, []any{tableID, m.Agent, m.LastTurn}, func(r pgx.Rows) error {
			var turn int
			var body string
			if err := r.Scan(&turn, &body); err != nil {
				return err
			}
			msgs = append(msgs, store.AgentMessage{Agent: m.Agent, Turn: turn, Body: json.RawMessage(body)})
			return nil
		})
	})
	if err != nil {
		return store.Memory{}, nil, fmt.Errorf("memory %d of table %s: %w", id, tableID, err)
	}
	return m, msgs, nil
}
