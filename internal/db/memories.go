package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// ActiveHistory returns the messages of an agent's history at a table that
// are not archived in a memory, oldest first: at most the last limit
// (limit <= 0: all), never starting in the middle of a turn. Each
// store.AgentMessage carries its turn.
func (d *DB) ActiveHistory(ctx context.Context, tableID, agentName string, limit int) ([]store.AgentMessage, error) {
	q := qActiveHistory
	args := []any{tableID, agentName}
	if limit > 0 {
		q += " LIMIT ?3"
		args = append(args, limit+1)
	}
	out, err := scanMessages(ctx, d.reader, agentName, q, args)
	if err != nil {
		return nil, fmt.Errorf("active %s history of table %s: %w", agentName, tableID, err)
	}
	slices.Reverse(out)
	if limit <= 0 || len(out) <= limit {
		return out, nil
	}
	// The extra oldest message tells whether the window starts a turn.
	before := out[0]
	out = out[1:]
	for len(out) > 0 && out[0].Turn == before.Turn {
		out = out[1:]
	}
	return out, nil
}

// AllHistory returns every message of an agent's history at a table,
// archived or not, oldest first (for the export).
func (d *DB) AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error) {
	out, err := scanMessages(ctx, d.reader, agentName,
		"SELECT turn, body FROM ("+wholeHistory+") ORDER BY id", []any{tableID, agentName})
	if err != nil {
		return nil, fmt.Errorf("%s history of table %s: %w", agentName, tableID, err)
	}
	return out, nil
}

// wholeHistory selects (id, turn, body) of every message of the history
// of table ?1's agent ?2, unordered.
const wholeHistory = "SELECT id, turn, body FROM agent_messages WHERE table_id = ?1 AND agent = ?2"

// Archives are a prefix of a history by turn (migration 0012): a message
// is archived if its turn is at most the last turn of a memory of its
// table and agent, in the memory with the smallest such last turn, and
// active otherwise. No row changes when it is archived.
const (
	// qActiveHistory selects the active messages of table ?1's agent ?2,
	// newest first.
	qActiveHistory = "SELECT turn, body FROM agent_messages WHERE table_id = ?1 AND agent = ?2 AND turn > " + lastArchivedTurn + " ORDER BY id DESC"
	// noTurn is below every turn: the last archived turn of a history
	// without memories.
	noTurn = "-9223372036854775808"
	// lastArchivedTurn is the last archived turn of table ?1's agent ?2,
	// or noTurn (one entry of memories_last_turn).
	lastArchivedTurn = "coalesce((SELECT max(last_turn) FROM memories WHERE table_id = ?1 AND agent = ?2), " + noTurn + ")"
)

func scanMessages(ctx context.Context, q querier, agentName, query string, args []any) ([]store.AgentMessage, error) {
	var out []store.AgentMessage
	err := each(ctx, q, query, args, func(r *sql.Rows) error {
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

// ArchiveHistory stores m as a new memory of m.TableID and moves the active
// messages of m.Agent with turns up to m.LastTurn into it, in one
// transaction (a group commit: see Commit and store.Commit.Archive). It
// returns m with its ID, CreatedAt, message count and first and last
// turns as stored (those of the messages it holds), an engine ENOTFOUND
// error if the table does not exist, or an engine ECONFLICT error if no
// active message is in that range (archived concurrently).
func (d *DB) ArchiveHistory(ctx context.Context, m store.Memory) (store.Memory, error) {
	if err := d.Commit(ctx, store.Commit{TableID: m.TableID, Archive: &m}); err != nil {
		return store.Memory{}, fmt.Errorf("archive %s history of table %s: %w", m.Agent, m.TableID, err)
	}
	return m, nil
}

const (
	// qArchiveRange counts the messages an archive moves, and their first
	// and last turns, before the memory row is written: the memory is
	// inserted once with its final counts, instead of being updated
	// afterwards, which made its FTS trigger delete and re-index the
	// memory's text. Any older active message goes too (one a failed
	// archive left behind), so the active history always starts after the
	// archive; the memory's last turn is its last message's, so no later
	// message is archived by it.
	qArchiveRange = `SELECT count(*), coalesce(min(turn), 0), coalesce(max(turn), 0) FROM agent_messages
WHERE table_id = ?1 AND agent = ?2 AND turn > ` + lastArchivedTurn + ` AND turn <= ?3`
	qInsertMemory = `INSERT INTO memories (table_id, agent, first_turn, last_turn, messages, title, summary, keywords, source, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// qIndexMemory indexes a new memory for search; archive runs it last in
	// the transaction (migration 0009 says why).
	qIndexMemory = "INSERT INTO memories_fts (rowid, title, summary, keywords) VALUES (?, ?, ?, ?)"
	// qMemoryMessages selects the messages of the memory of table ?1's
	// agent ?2 whose last turn is ?3: those after the memory before it.
	qMemoryMessages = `SELECT turn, body FROM agent_messages
WHERE table_id = ?1 AND agent = ?2 AND turn <= ?3
AND turn > coalesce((SELECT max(last_turn) FROM memories WHERE table_id = ?1 AND agent = ?2 AND last_turn < ?3), ` + noTurn + `)
ORDER BY id`
)

// archive runs the statements of a commit's Archive in w (see
// ArchiveHistory for the rules) and, once w commits, fills *m with the
// memory as stored.
func archive(w *writeTx, tableID string, m *store.Memory, at time.Time) error {
	stored := *m
	stored.TableID, stored.CreatedAt = tableID, at.UTC()
	if stored.Keywords == nil {
		stored.Keywords = []string{}
	}
	var n int64
	if err := w.queryRow(qArchiveRange, tableID, stored.Agent, stored.LastTurn).Scan(&n, &stored.FirstTurn, &stored.LastTurn); err != nil {
		return fmt.Errorf("archive range: %w", err)
	}
	if n == 0 {
		var one int
		if err := w.conn.QueryRowContext(w.ctx, "SELECT 1 FROM tables WHERE id = ?", tableID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return tableNotFound(tableID)
		}
		return engine.Errorf(engine.ECONFLICT, "no active %s message in turns %d-%d", m.Agent, m.FirstTurn, m.LastTurn)
	}
	stored.Messages = int(n)
	keywords := plainJSON(stored.Keywords)
	res, err := w.exec(qInsertMemory, tableID, stored.Agent, stored.FirstTurn, stored.LastTurn, stored.Messages,
		stored.Title, stored.Summary, keywords, stored.Source, formatTime(stored.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert memory: %w", err)
	}
	if stored.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	w.beforeCommit(func() error {
		if _, err := w.exec(qIndexMemory, stored.ID, stored.Title, stored.Summary, keywords); err != nil {
			return fmt.Errorf("index memory %d: %w", stored.ID, err)
		}
		return nil
	})
	w.afterCommit(func() { *m = stored })
	return nil
}

// UpdateMemory replaces the title, summary, keywords and source of a
// memory (a new summary of the same block). ENOTFOUND if the table has no
// such memory.
func (d *DB) UpdateMemory(ctx context.Context, m store.Memory) error {
	if m.Keywords == nil {
		m.Keywords = []string{}
	}
	err := d.write(ctx, func(w *writeTx) error {
		res, err := w.conn.ExecContext(ctx, "UPDATE memories SET title = ?, summary = ?, keywords = ?, source = ? WHERE id = ? AND table_id = ?",
			m.Title, m.Summary, plainJSON(m.Keywords), m.Source, m.ID, m.TableID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return engine.Errorf(engine.ENOTFOUND, "memory %d not found", m.ID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("update memory %d: %w", m.ID, err)
	}
	return nil
}

const memoryCols = "m.id, m.table_id, m.agent, m.first_turn, m.last_turn, m.messages, m.title, m.summary, m.keywords, m.source, m.created_at"

func scanMemory(r interface{ Scan(...any) error }) (store.Memory, error) {
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

// Memories returns the last limit memories of a table (limit <= 0: all),
// of one agent or of both when agentName is "", oldest first.
func (d *DB) Memories(ctx context.Context, tableID, agentName string, limit int) ([]store.Memory, error) {
	// Two shapes rather than (? = '' OR agent = ?), which would keep
	// SQLite from using the (table_id, agent, id) index on every turn.
	q := "SELECT " + memoryCols + " FROM memories m WHERE m.table_id = ? ORDER BY m.id DESC"
	args := []any{tableID}
	if agentName != "" {
		q = "SELECT " + memoryCols + " FROM memories m WHERE m.table_id = ? AND m.agent = ? ORDER BY m.id DESC"
		args = append(args, agentName)
	}
	if limit > 0 {
		q += " LIMIT ?"
		args = append(args, limit)
	}
	var out []store.Memory
	err := each(ctx, d.reader, q, args, func(r *sql.Rows) error {
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

// ftsQuery turns free text into an FTS5 query: its words (letters and
// digits only, so no FTS syntax gets through), each a prefix match, any of
// them matching; "" if there is no word.
func ftsQuery(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var parts []string
	for _, w := range words {
		if len(parts) == 16 {
			break
		}
		parts = append(parts, `"`+w+`"*`)
	}
	return strings.Join(parts, " OR ")
}

// SearchMemories implements the agent package's MemoryIndex: full-text search (FTS5,
// bm25 ranking) over the titles, summaries and keywords of a table's
// memories, best first. A query without any word matches nothing.
func (d *DB) SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error) {
	fq := ftsQuery(query)
	if fq == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 10
	}
	q := "SELECT " + memoryCols + ` FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
		WHERE memories_fts MATCH ? AND m.table_id = ? ORDER BY bm25(memories_fts, 5.0, 1.0, 3.0), m.id DESC LIMIT ?`
	var out []store.Memory
	err := each(ctx, d.reader, q, []any{fq, tableID, limit}, func(r *sql.Rows) error {
		m, err := scanMemory(r)
		out = append(out, m)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search memories of table %s: %w", tableID, err)
	}
	return out, nil
}

// MemorySession implements the agent package's MemoryIndex: one memory of a table and
// its archived messages (each with its Turn), or an engine ENOTFOUND error.
func (d *DB) MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error) {
	var m store.Memory
	var msgs []store.AgentMessage
	err := d.read(ctx, func(tx *sql.Tx) error {
		var err error
		m, err = scanMemory(tx.QueryRowContext(ctx, "SELECT "+memoryCols+" FROM memories m WHERE m.id = ? AND m.table_id = ?", id, tableID))
		if errors.Is(err, sql.ErrNoRows) {
			return engine.Errorf(engine.ENOTFOUND, "session %d not found", id)
		}
		if err != nil {
			return err
		}
		return each(ctx, tx, qMemoryMessages, []any{tableID, m.Agent, m.LastTurn}, func(r *sql.Rows) error {
			var turn int
			var body string
			if err := r.Scan(&turn, &body); err != nil {
				return err
			}
			if !json.Valid([]byte(body)) {
				return fmt.Errorf("message of turn %d is not JSON", turn)
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
