package pgdb

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// btx is one write transaction being built: its statements, queued in
// order on one pgx.Batch, each with the check of its result. A check's
// error fails the transaction.
type btx struct {
	b *pgx.Batch
	// cache gives the rows table id holds (nil: unknown); the group-commit
	// writer sets it. staged are the caches this transaction makes.
	cache  func(id string) *rowCache
	staged map[string]*rowCache
	// committed run, in order, once the transaction has committed.
	committed []func()
	// judged is set once a check may fail a statement the database ran
	// (no row updated, a row read that says no): the transaction must then
	// stay open until the checks have run (run).
	judged bool
}

func newBtx() *btx { return &btx{b: &pgx.Batch{}, staged: map[string]*rowCache{}} }

// exec queues q; check (if not nil) sees its result, and may only fail
// when the statement failed.
func (t *btx) exec(q string, args []any, check func(pgconn.CommandTag, error) error) {
	t.b.Queue(q, args...).Fn = func(br pgx.BatchResults) error {
		ct, err := br.Exec()
		if check != nil {
			return check(ct, err)
		}
		return err
	}
}

// execJudged is exec for a check that may fail a statement that ran.
func (t *btx) execJudged(q string, args []any, check func(pgconn.CommandTag, error) error) {
	t.judged = true
	t.exec(q, args, check)
}

// queryRow queues q, which returns one row, for scan, which may only fail
// when the statement failed: a statement that must refuse a commit does
// so in the database (tavern_refuse, below).
func (t *btx) queryRow(q string, args []any, scan func(pgx.Row) error) {
	t.b.Queue(q, args...).Fn = func(br pgx.BatchResults) error { return scan(br.QueryRow()) }
}

// queryRowJudged is queryRow for a scan that may fail a statement that
// ran.
func (t *btx) queryRowJudged(q string, args []any, scan func(pgx.Row) error) {
	t.judged = true
	t.queryRow(q, args, scan)
}

// A statement refuses a commit by calling tavern_refuse (migration 0024)
// with one of these SQLSTATEs: the error aborts the transaction, and the
// statement's check maps the code to the caller's error.
const (
	// refusalNoTable: the commit's table does not exist ($1 is its id).
	refusalNoTable    = "TV404"
	refusalNoTableSQL = "tavern_refuse('" + refusalNoTable + "', 'no table ' || $1)"
	// refusalNoRows: the rows the statement was to act on are not there.
	refusalNoRows    = "TV409"
	refusalNoRowsSQL = "tavern_refuse('" + refusalNoRows + "', 'no such rows')"
)

// afterCommit runs f once the transaction has committed (never if it fails).
func (t *btx) afterCommit(f func()) { t.committed = append(t.committed, f) }

func (t *btx) written(id string) *rowCache {
	if c, ok := t.staged[id]; ok {
		return c
	}
	if t.cache == nil {
		return nil
	}
	return t.cache(id)
}

// wrapErr returns a check that wraps a failed statement's error with what.
func wrapErr(what string) func(pgconn.CommandTag, error) error {
	return func(_ pgconn.CommandTag, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}

// run sends t's statements in one transaction and commits it, then runs
// its afterCommit functions. A transaction whose checks only map the
// errors of statements (every group commit of plain turns and chat) is one
// round trip: a batch is one implicit transaction, which the first
// statement that fails rolls back, and the fence is a statement that
// fails (owners.go). A judged one is BEGIN, the batch, then COMMIT once
// its checks pass. The whole of it is bounded by d.txTimeout, so a
// connection that stalls (a half-open socket) fails the transaction as
// a storage fault rather than stall the writer.
func (d *DB) run(ctx context.Context, t *btx) error {
	if t.b.Len() > 0 {
		ctx, cancel := context.WithTimeout(ctx, d.txTimeout)
		defer cancel()
		if err := d.send(ctx, t); err != nil {
			if ctx.Err() != nil && !pgconn.Timeout(err) {
				err = fmt.Errorf("%w: %w", err, ctx.Err())
			}
			return err
		}
	}
	for _, f := range t.committed {
		f()
	}
	return nil
}

func (d *DB) send(ctx context.Context, t *btx) error {
	if !t.judged {
		return d.pool.SendBatch(ctx, t.b).Close()
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return err
	}
	if err := tx.SendBatch(ctx, t.b).Close(); err != nil {
		tx.Rollback(context.Background())
		return err
	}
	return tx.Commit(ctx)
}

const (
	qInsertSeat    = "INSERT INTO seats (table_id, seat, player_id, character_id, joined_at) VALUES ($1, $2, $3, $4, $5)"
	qDeleteSeat    = "DELETE FROM seats WHERE table_id = $1 AND seat = $2"
	qInsertPending = `INSERT INTO pending_actions (table_id, id, player_id, character_id, seat, client_id, text, status, created_at, kind)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`
	qResolvePending = "UPDATE pending_actions SET status = 'resolved', state = 'resolved', resolved_at = $1 WHERE table_id = $2 AND id = ANY($3::text[]) AND status = 'pending'"
	// qAbandonActions closes actions as abandoned: never played, or their
	// turn undone (a retcon). qAbandonPending does so to open ones only.
	qAbandonActions = "UPDATE pending_actions SET status = 'resolved', state = 'abandoned', resolved_at = $1 WHERE table_id = $2 AND id = ANY($3::text[])"
	qAbandonPending = qAbandonActions + " AND status = 'pending'"
	// qSetActionState leaves closed actions alone: a late state write
	// never reopens what a commit resolved.
	qSetActionState = `UPDATE pending_actions SET state = $1, attempts = $2, last_error = $3 WHERE table_id = $4 AND id = $5 AND status = 'pending'`
	qInsertEvents   = `INSERT INTO events (table_id, seq, ts, kind, turn, data)
SELECT $1::text, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[])`
	qInsertMessages = `INSERT INTO agent_messages (table_id, agent, turn, body, created_at)
SELECT $1::text, a, t, b, $5::text FROM unnest($2::text[], $3::integer[], $4::text[]) WITH ORDINALITY AS m(a, t, b, n) ORDER BY n`
	qInsertCalls = `INSERT INTO llm_calls (table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, error, turn, error_kind, prompt_version)
SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::integer[], $7::integer[], $8::integer[], $9::float8[], $10::text[], $11::text[], $12::text[], $13::text[])`
	qSetTablePaused = "UPDATE tables SET paused = $1 WHERE id = $2"
	qCloseTable     = "UPDATE tables SET closed_at = $1 WHERE id = $2"
)

// encodedRows is the text of a commit's rows, encoded by Enqueue on its
// caller's goroutine rather than by the writer, whose time every commit
// shares.
type encodedRows struct {
	seqs                    []int64
	ts, kinds, turns, datas []string
	state                   *encodedState // nil: the commit has no state
}

func encodeRows(c store.Commit) (*encodedRows, error) {
	r := &encodedRows{}
	if len(c.Events) > 0 {
		if c.EventData != nil && len(c.EventData) != len(c.Events) {
			return nil, fmt.Errorf("%d events but the data of %d", len(c.Events), len(c.EventData))
		}
		for i, e := range c.Events {
			var data []byte
			if c.EventData != nil {
				data = c.EventData[i]
			} else {
				var err error
				if data, err = json.Marshal(e.Data); err != nil {
					return nil, fmt.Errorf("encode event %d (%s): %w", e.Seq, e.Kind, err)
				}
			}
			r.seqs = append(r.seqs, e.Seq)
			r.ts = append(r.ts, formatTime(e.TS))
			r.kinds = append(r.kinds, string(e.Kind))
			r.turns = append(r.turns, e.Turn)
			r.datas = append(r.datas, string(data))
		}
	}
	if c.State != nil {
		var err error
		if r.state, err = encodeState(c.State); err != nil {
			return nil, err
		}
	}
	return r, nil
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

// applyCommit queues the statements of c on t, in the order db.Commit
// documents; at stamps the rows.
func applyCommit(t *btx, c store.Commit, rows *encodedRows, at time.Time) error {
	if rows == nil {
		var err error
		if rows, err = encodeRows(c); err != nil {
			return err
		}
	}
	now := formatTime(at)
	id := c.TableID
	if p := c.AddPending; p != nil {
		status := p.Status
		if status == "" {
			status = engine.ActionPending
		}
		t.exec(qInsertPending, []any{id, p.ID, p.PlayerID, p.CharacterID, p.Seat, p.ClientID, p.Text, status, formatTime(p.CreatedAt), p.Kind},
			func(_ pgconn.CommandTag, err error) error {
				if isUnique(err) {
					return engine.Errorf(engine.ECONFLICT, "action %s (client id %s) was already received", p.ID, p.ClientID)
				}
				if err != nil {
					return fmt.Errorf("insert pending action %s: %w", p.ID, err)
				}
				return nil
			})
	}
	if c.State != nil {
		prev := t.written(id)
		t.staged[id] = writeState(t, id, c.State, rows.state, prev, now)
	}
	if len(rows.seqs) > 0 {
		t.exec(qInsertEvents, []any{id, rows.seqs, rows.ts, rows.kinds, rows.turns, rows.datas}, wrapErr(fmt.Sprintf("insert events from %d", rows.seqs[0])))
	}
	if c.Paused != nil {
		t.execJudged(qSetTablePaused, []any{*c.Paused, id}, updatedTable(id, "set paused mark"))
	}
	if c.ClosedAt != nil {
		t.execJudged(qCloseTable, []any{formatTime(*c.ClosedAt), id}, updatedTable(id, "set closed mark"))
	}
	setOwnerMarks(t, c) // tableowners.go
	if len(c.Messages) > 0 {
		agents, turns, bodies := make([]string, len(c.Messages)), make([]int32, len(c.Messages)), make([]string, len(c.Messages))
		for i, m := range c.Messages {
			agents[i], turns[i], bodies[i] = m.Agent, int32(m.Turn), string(m.Body)
		}
		t.exec(qInsertMessages, []any{id, agents, turns, bodies, now}, wrapErr("insert "+c.Messages[0].Agent+" messages"))
	}
	if s := c.AddSeat; s != nil {
		t.exec(qInsertSeat, []any{id, s.Seat, s.PlayerID, s.CharacterID, formatTime(s.JoinedAt)}, func(_ pgconn.CommandTag, err error) error {
			if isUnique(err) {
				return engine.Errorf(engine.ECONFLICT, "seat %s is taken or player %s is already seated", s.Seat, s.PlayerID)
			}
			if err != nil {
				return fmt.Errorf("insert seat %s: %w", s.Seat, err)
			}
			return nil
		})
	}
	if c.RemoveSeat != "" {
		t.exec(qDeleteSeat, []any{id, c.RemoveSeat}, wrapErr("delete seat "+c.RemoveSeat))
	}
	if len(c.Resolve) > 0 {
		t.exec(qResolvePending, []any{now, id, c.Resolve}, wrapErr("resolve actions"))
	}
	if len(c.Abandon) > 0 {
		t.exec(qAbandonPending, []any{now, id, c.Abandon}, wrapErr("abandon actions"))
	}
	// Before the archive: a save point records the memories before it.
	if err := applyOwner(t, c, now); err != nil {
		return err
	}
	if c.Archive != nil {
		archive(t, id, c.Archive, at)
	}
	for _, a := range c.Lives {
		t.exec(qSetActionState, []any{a.State, a.Attempts, a.Error, id, a.ActionID}, wrapErr("set state of action "+a.ActionID))
	}
	if len(c.Calls) > 0 {
		queueCalls(t, c.Calls)
	}
	return nil
}

// updatedTable is the check of an UPDATE of table id's row: ENOTFOUND if
// there is no such row.
func updatedTable(id, what string) func(pgconn.CommandTag, error) error {
	return func(ct pgconn.CommandTag, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ct.RowsAffected() == 0 {
			return tableNotFound(id)
		}
		return nil
	}
}

func queueCalls(t *btx, calls []store.LLMCall) {
	n := len(calls)
	tables, agents, models, started := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	latency := make([]int64, n)
	prompt, completion, cached := make([]int32, n), make([]int32, n), make([]int32, n)
	cost := make([]float64, n)
	errs, turns, kinds, versions := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, c := range calls {
		l := c.LatencyMS
		if l == 0 && c.Latency > 0 {
			l = c.Latency.Milliseconds()
		}
		tables[i], agents[i], models[i], started[i] = c.TableID, c.Agent, c.Model, formatTime(c.Started)
		latency[i], prompt[i], completion[i], cached[i] = l, int32(c.PromptTokens), int32(c.CompletionTokens), int32(c.CachedTokens)
		cost[i], errs[i], turns[i], kinds[i] = c.CostUSD, c.Error, c.Turn, c.ErrorKind
		versions[i] = c.PromptVersion
	}
	t.exec(qInsertCalls, []any{tables, agents, models, started, latency, prompt, completion, cached, cost, errs, turns, kinds, versions}, wrapErr("insert calls"))
}

// commitError maps the error of applying c to what Commit returns.
func commitError(c store.Commit, err error) error {
	if err == nil {
		return nil
	}
	err = withUnavailable(err)
	if c.TableID == "" {
		return err
	}
	if isForeignKey(err) {
		err = tableNotFound(c.TableID)
	}
	return fmt.Errorf("commit to table %s: %w", c.TableID, err)
}
