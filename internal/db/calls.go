package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"tavern/internal/store"
)

// LogCall implements the agent package's CallLog: it appends one model call to the log.
func (d *DB) LogCall(ctx context.Context, c store.LLMCall) error {
	return d.LogCalls(ctx, []store.LLMCall{c})
}

// LogCalls appends model calls to the log in one group commit (the agent
// package's CallWriter hands over whatever it has queued): all of them or,
// on error, none.
func (d *DB) LogCalls(ctx context.Context, calls []store.LLMCall) error {
	if err := d.Commit(ctx, store.Commit{Calls: calls}); err != nil {
		return fmt.Errorf("log %d calls: %w", len(calls), err)
	}
	return nil
}

// QueueCalls implements the agent package's CallQueue: it queues the calls
// as one group commit, like LogCalls, and returns once they are queued;
// done gets what LogCalls would have returned (see Enqueue).
func (d *DB) QueueCalls(ctx context.Context, calls []store.LLMCall, done func(error)) error {
	wrap := func(err error) error {
		if err != nil {
			return fmt.Errorf("log %d calls: %w", len(calls), err)
		}
		return nil
	}
	if err := d.Enqueue(ctx, store.Commit{Calls: calls}, func(err error) { done(wrap(err)) }); err != nil {
		return wrap(err)
	}
	return nil
}

var qInsertCalls = insertSQL(`INSERT INTO llm_calls (table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, error, turn, error_kind, prompt_version)
VALUES `, 13)

// insertCalls appends calls to the log, rowsPerInsert to a statement.
func insertCalls(w *writeTx, calls []store.LLMCall) error {
	_, err := insertRows(w, qInsertCalls, len(calls), func(args []any, i int) []any {
		c := &calls[i]
		latency := c.LatencyMS
		if latency == 0 && c.Latency > 0 {
			latency = c.Latency.Milliseconds()
		}
		return append(args, c.TableID, c.Agent, c.Model, formatTime(c.Started), latency, c.PromptTokens,
			c.CompletionTokens, c.CachedTokens, c.CostUSD, c.Error, c.Turn, c.ErrorKind, c.PromptVersion)
	})
	if err != nil {
		return fmt.Errorf("insert calls: %w", err)
	}
	return nil
}

// Calls returns the last limit model calls of a table (all tables when
// tableID is ""), newest first.
func (d *DB) Calls(ctx context.Context, tableID string, limit int) ([]store.LLMCall, error) {
	if limit <= 0 {
		limit = 100
	}
	var out []store.LLMCall
	err := each(ctx, d.reader, `SELECT `+callCols+`
		FROM llm_calls WHERE ? = '' OR table_id = ? ORDER BY id DESC LIMIT ?`, []any{tableID, tableID, limit}, func(r *sql.Rows) error {
		c, err := scanCall(r)
		out = append(out, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("calls of table %q: %w", tableID, err)
	}
	return out, nil
}

const callCols = "id, table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, error, turn, error_kind, prompt_version"

func scanCall(r *sql.Rows) (store.LLMCall, error) {
	var c store.LLMCall
	var started string
	if err := r.Scan(&c.ID, &c.TableID, &c.Agent, &c.Model, &started, &c.LatencyMS, &c.PromptTokens, &c.CompletionTokens, &c.CachedTokens, &c.CostUSD, &c.Error, &c.Turn, &c.ErrorKind, &c.PromptVersion); err != nil {
		return c, err
	}
	t, err := parseTime(started)
	c.Started, c.Latency = t, time.Duration(c.LatencyMS)*time.Millisecond
	return c, err
}
