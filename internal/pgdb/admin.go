package pgdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The players, the call log, the operator's reads and the data agent's
// conversations, as db.DB documents them.

// CreatePlayer stores a player identity with the hash of its secret token:
// EINVALID if tokenHash is empty, ECONFLICT if the id or the hash is taken.
func (d *DB) CreatePlayer(ctx context.Context, p engine.Player, tokenHash []byte) error {
	if len(tokenHash) == 0 {
		return engine.Errorf(engine.EINVALID, "player %s has no token", p.ID)
	}
	_, err := d.pool.Exec(ctx, "INSERT INTO players (id, name, token_hash, created_at) VALUES ($1, $2, $3, $4)",
		p.ID, p.Name, tokenHash, formatTime(p.CreatedAt))
	if isUnique(err) {
		err = engine.Errorf(engine.ECONFLICT, "player %s already exists", p.ID)
	}
	if err != nil {
		return fmt.Errorf("create player %s: %w", p.ID, err)
	}
	return nil
}

// PlayerByTokenHash returns the player whose token hashes to hash, or an
// ENOTFOUND *engine.Error, also for a player banned or erased by the
// operator (their token no longer signs them in).
func (d *DB) PlayerByTokenHash(ctx context.Context, hash []byte) (engine.Player, error) {
	p, err := scanPlayer(d.pool.QueryRow(ctx, "SELECT id, name, created_at FROM players WHERE token_hash = $1 AND banned_at IS NULL AND erased_at IS NULL", hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Player{}, engine.Errorf(engine.ENOTFOUND, "no player has this token")
	}
	if err != nil {
		return engine.Player{}, fmt.Errorf("player by token: %w", err)
	}
	return p, nil
}

// Player returns the player with id, or an ENOTFOUND *engine.Error.
func (d *DB) Player(ctx context.Context, id string) (engine.Player, error) {
	p, err := scanPlayer(d.pool.QueryRow(ctx, "SELECT id, name, created_at FROM players WHERE id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
		return engine.Player{}, engine.Errorf(engine.ENOTFOUND, "player %s not found", id)
	}
	if err != nil {
		return engine.Player{}, fmt.Errorf("player %s: %w", id, err)
	}
	return p, nil
}

func scanPlayer(r pgx.Row) (engine.Player, error) {
	var p engine.Player
	var created string
	if err := r.Scan(&p.ID, &p.Name, &created); err != nil {
		return p, err
	}
	var err error
	if p.CreatedAt, err = parseTime(created); err != nil {
		return p, fmt.Errorf("player %s: created_at: %w", p.ID, err)
	}
	return p, nil
}

// LogCall appends one model call to the log.
func (d *DB) LogCall(ctx context.Context, c store.LLMCall) error {
	return d.LogCalls(ctx, []store.LLMCall{c})
}

// LogCalls appends model calls to the log in one group commit.
func (d *DB) LogCalls(ctx context.Context, calls []store.LLMCall) error {
	if err := d.Commit(ctx, store.Commit{Calls: calls}); err != nil {
		return fmt.Errorf("log %d calls: %w", len(calls), err)
	}
	return nil
}

// QueueCalls queues the calls as one group commit and returns once they
// are queued; done gets what LogCalls would have returned.
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

const callCols = "id, table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, error, turn, error_kind, prompt_version"

func scanCall(r pgx.Row) (store.LLMCall, error) {
	var c store.LLMCall
	var started string
	if err := r.Scan(&c.ID, &c.TableID, &c.Agent, &c.Model, &started, &c.LatencyMS, &c.PromptTokens, &c.CompletionTokens,
		&c.CachedTokens, &c.CostUSD, &c.Error, &c.Turn, &c.ErrorKind, &c.PromptVersion); err != nil {
		return c, err
	}
	t, err := parseTime(started)
	c.Started, c.Latency = t, time.Duration(c.LatencyMS)*time.Millisecond
	return c, err
}

// Calls returns the last limit model calls of a table (all when tableID is
// ""), newest first.
func (d *DB) Calls(ctx context.Context, tableID string, limit int) ([]store.LLMCall, error) {
	if limit <= 0 {
		limit = 100
	}
	var out []store.LLMCall
	err := each(ctx, d.pool, "SELECT "+callCols+" FROM llm_calls WHERE $1 = '' OR table_id = $1 ORDER BY id DESC LIMIT $2",
		[]any{tableID, limit}, func(r pgx.Rows) error {
			c, err := scanCall(r)
			out = append(out, c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("calls of table %q: %w", tableID, err)
	}
	return out, nil
}

// CallsSince returns every model call started at or after since, of one
// table or of all when tableID is "", oldest first, at most limit (<= 0:
// 100,000, the newest kept).
func (d *DB) CallsSince(ctx context.Context, since time.Time, tableID string, limit int) ([]store.LLMCall, error) {
	if limit <= 0 {
		limit = 100_000
	}
	var out []store.LLMCall
	err := each(ctx, d.pool, `SELECT `+callCols+` FROM (SELECT * FROM llm_calls
		WHERE started_at >= $1 AND ($2 = '' OR table_id = $2) ORDER BY started_at DESC, id DESC LIMIT $3) c ORDER BY started_at, id`,
		[]any{formatTime(since), tableID, limit}, func(r pgx.Rows) error {
			c, err := scanCall(r)
			out = append(out, c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("calls since %s: %w", since.Format(time.RFC3339), err)
	}
	return out, nil
}

// TurnTimes returns when each DM turn started narrating since since, over
// every table, oldest first.
func (d *DB) TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error) {
	var out []time.Time
	err := each(ctx, d.pool, `SELECT MIN(ts) FROM events WHERE kind = 'narration' AND ts >= $1 AND turn NOT IN ('', 't0')
		GROUP BY table_id, turn ORDER BY 1`, []any{formatTime(since)}, func(r pgx.Rows) error {
		var s string
		if err := r.Scan(&s); err != nil {
			return err
		}
		t, err := parseTime(s)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("turn times: %w", err)
	}
	return out, nil
}

// SetActionState records where an open pending action is in its life and
// returns once it is durable.
func (d *DB) SetActionState(ctx context.Context, tableID string, a store.ActionLife) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, Lives: []store.ActionLife{a}})
}

// ActionStates returns the life of every open pending action of a table,
// by action id.
func (d *DB) ActionStates(ctx context.Context, tableID string) (map[string]store.ActionLife, error) {
	out := map[string]store.ActionLife{}
	err := each(ctx, d.pool, `SELECT id, state, attempts, last_error FROM pending_actions
		WHERE table_id = $1 AND status = 'pending'`, []any{tableID}, func(r pgx.Rows) error {
		var a store.ActionLife
		if err := r.Scan(&a.ActionID, &a.State, &a.Attempts, &a.Error); err != nil {
			return err
		}
		out[a.ActionID] = a
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("action states of %s: %w", tableID, err)
	}
	return out, nil
}

// ActionByClientID returns the life of the action a player sent at a
// table under clientID, open or closed, and whether there is one.
func (d *DB) ActionByClientID(ctx context.Context, tableID, playerID, clientID string) (store.ActionLife, bool, error) {
	var a store.ActionLife
	err := d.pool.QueryRow(ctx, `SELECT id, state, attempts, last_error FROM pending_actions
		WHERE table_id = $1 AND player_id = $2 AND client_id = $3`, tableID, playerID, clientID).
		Scan(&a.ActionID, &a.State, &a.Attempts, &a.Error)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ActionLife{}, false, nil
	}
	if err != nil {
		return store.ActionLife{}, false, fmt.Errorf("action %q of %s at %s: %w", clientID, playerID, tableID, err)
	}
	return a, true, nil
}

// SetTablePaused marks a table paused or not; ENOTFOUND if there is no
// such table.
func (d *DB) SetTablePaused(ctx context.Context, tableID string, paused bool) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, Paused: &paused})
}

// CloseTable marks a table closed at at; ENOTFOUND if there is no such
// table.
func (d *DB) CloseTable(ctx context.Context, tableID string, at time.Time) error {
	return d.Commit(ctx, store.Commit{TableID: tableID, ClosedAt: &at})
}

// TableFlags returns the operator's marks of every table, by table id.
func (d *DB) TableFlags(ctx context.Context) (map[string]store.TableFlags, error) {
	out := map[string]store.TableFlags{}
	err := each(ctx, d.pool, "SELECT id, paused, COALESCE(closed_at, '') FROM tables", nil, func(r pgx.Rows) error {
		var id, closed string
		var f store.TableFlags
		if err := r.Scan(&id, &f.Paused, &closed); err != nil {
			return err
		}
		if closed != "" {
			t, err := parseTime(closed)
			if err != nil {
				return fmt.Errorf("table %s: closed_at: %w", id, err)
			}
			f.Closed, f.ClosedAt = true, t
		}
		out[id] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table flags: %w", err)
	}
	return out, nil
}

// Conversation returns the messages of the data agent's conversation id,
// oldest first, or an ENOTFOUND *engine.Error if there is none.
func (d *DB) Conversation(ctx context.Context, id string) ([]store.AgentMessage, error) {
	var out []store.AgentMessage
	err := each(ctx, d.pool, "SELECT turn, body FROM ask_messages WHERE conversation = $1 ORDER BY id", []any{id}, func(r pgx.Rows) error {
		m := store.AgentMessage{Agent: "data"}
		var body string
		if err := r.Scan(&m.Turn, &body); err != nil {
			return err
		}
		m.Body = []byte(body)
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("conversation %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, engine.Errorf(engine.ENOTFOUND, "There is no conversation %q; ask without one to start a new conversation.", id)
	}
	return out, nil
}

// AppendConversation adds msgs to the data agent's conversation id in one
// transaction.
func (d *DB) AppendConversation(ctx context.Context, id string, msgs []store.AgentMessage) error {
	now := formatTime(d.now())
	t := newBtx()
	for _, m := range msgs {
		t.exec("INSERT INTO ask_messages (conversation, turn, body, created_at) VALUES ($1, $2, $3, $4)", []any{id, m.Turn, string(m.Body), now}, nil)
	}
	if err := d.run(ctx, t); err != nil {
		return fmt.Errorf("append to conversation %s: %w", id, err)
	}
	return nil
}
