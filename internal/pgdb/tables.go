package pgdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/engine"
	"tavern/internal/store"
)

const tableCols = "id, name, adventure, ruleset, combat_mode, turn_timeout_s, seats, owner_id, created_at, private, npc_hp"

// tCols is tableCols of the tables row named t in a join, as scanTable
// reads them.
var tCols = "t." + strings.ReplaceAll(tableCols, ", ", ", t.")

const qInsertTable = "INSERT INTO tables (" + tableCols + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"

// CreateTable stores a new table, its initial state and first events in
// one transaction (db.DB.CreateTable's contract): ECONFLICT if the id
// exists, EINVALID if st is nil. On a cluster node the new table is this
// node's (epoch 1). Safe for concurrent use.
func (d *DB) CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error {
	if st == nil {
		return engine.Errorf(engine.EINVALID, "table %s has no state", t.ID)
	}
	tx := newBtx()
	tx.exec(qInsertTable, []any{t.ID, t.Name, t.Adventure, t.Config.Ruleset, t.Config.CombatMode, t.Config.TurnTimeoutS,
		t.Seats, t.OwnerID, formatTime(t.CreatedAt), t.Private, npcHPColumn(t.Config.NPCHP)}, func(_ pgconn.CommandTag, err error) error {
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "table %s already exists", t.ID)
		}
		return err
	})
	epoch := d.claimNew(tx, t.ID)
	enc, err := encodeState(st)
	if err != nil {
		return fmt.Errorf("create table %s: %w", t.ID, err)
	}
	cache := writeState(tx, t.ID, st, enc, nil, formatTime(d.now()))
	if len(evs) > 0 {
		rows, err := encodeRows(store.Commit{Events: evs})
		if err != nil {
			return fmt.Errorf("create table %s: %w", t.ID, err)
		}
		tx.exec(qInsertEvents, []any{t.ID, rows.seqs, rows.ts, rows.kinds, rows.turns, rows.datas}, wrapErr("insert events"))
	}
	if err := d.run(ctx, tx); err != nil {
		return fmt.Errorf("create table %s: %w", t.ID, withUnavailable(err))
	}
	cache.epoch = epoch
	d.keepRows(t.ID, cache)
	return nil
}

// Tables lists every stored table, oldest first.
func (d *DB) Tables(ctx context.Context) ([]engine.Table, error) {
	var out []engine.Table
	err := each(ctx, d.pool, "SELECT "+tableCols+" FROM tables ORDER BY created_at, id", nil, func(r pgx.Rows) error {
		t, err := scanTable(r)
		out = append(out, t)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return out, nil
}

// lastTurnAt selects the time of the last turn's narration at table t.
const lastTurnAt = `COALESCE((SELECT e.ts FROM events e WHERE e.table_id = t.id AND e.kind = 'narration'
	AND e.turn NOT IN ('', 't0') ORDER BY e.seq DESC LIMIT 1), '')`

// TableInfos returns what the lobby and a lazily loading hub need of
// every stored table, oldest first, in one query.
func (d *DB) TableInfos(ctx context.Context) ([]store.TableInfo, error) {
	q := `SELECT ` + tCols + `, COALESCE(g.game::jsonb ->> 'mode', ''),
		(SELECT count(*) FROM seats s WHERE s.table_id = t.id),
		EXISTS (SELECT 1 FROM pending_actions p WHERE p.table_id = t.id AND p.status = 'pending'),
		t.paused, COALESCE(t.closed_at, '')
		FROM tables t LEFT JOIN game_state g ON g.table_id = t.id ORDER BY t.created_at, t.id`
	var out []store.TableInfo
	err := each(ctx, d.pool, q, nil, func(r pgx.Rows) error {
		var i store.TableInfo
		var closed string
		var err error
		if i.Table, err = scanTable(r, &i.Mode, &i.Seated, &i.Pending, &i.Flags.Paused, &closed); err != nil {
			return err
		}
		if err := setClosed(&i.Flags, i.Table.ID, closed); err != nil {
			return err
		}
		out = append(out, i)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table infos: %w", err)
	}
	return out, nil
}

// setClosed sets f's closed mark from table id's closed_at column.
func setClosed(f *store.TableFlags, id, closedAt string) error {
	if closedAt == "" {
		return nil
	}
	t, err := parseTime(closedAt)
	if err != nil {
		return fmt.Errorf("table %s: closed_at: %w", id, err)
	}
	f.Closed, f.ClosedAt = true, t
	return nil
}

// TableProgress returns how far every stored table has played, by id.
func (d *DB) TableProgress(ctx context.Context) (map[string]store.TableProgress, error) {
	q := `SELECT t.id, COALESCE((g.game::jsonb ->> 'turn')::integer, 0), (g.game::jsonb #>> '{combat,round}')::integer, ` + lastTurnAt + `
		FROM tables t LEFT JOIN game_state g ON g.table_id = t.id`
	out := map[string]store.TableProgress{}
	err := each(ctx, d.pool, q, nil, func(r pgx.Rows) error {
		var id, lastTurn string
		var p store.TableProgress
		var round *int32
		if err := r.Scan(&id, &p.Turn, &round, &lastTurn); err != nil {
			return err
		}
		if round != nil {
			n := int(*round)
			p.Round = &n
		}
		var err error
		if p.LastTurnAt, err = parseOptTime(lastTurn); err != nil {
			return fmt.Errorf("table %s: last turn: %w", id, err)
		}
		out[id] = p
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table progress: %w", err)
	}
	return out, nil
}

// LoadTable returns everything needed to bring a table back, read from
// one snapshot (db.DB.LoadTable's contract); ENOTFOUND if there is no
// such table. On a cluster node it claims the table first (owners.go),
// and fails with an *OwnedElsewhere (store.ErrNotOwner) if another live
// node owns it.
func (d *DB) LoadTable(ctx context.Context, id string) (store.TableData, error) {
	if n := d.node.Load(); n != nil {
		if err := d.claim(ctx, n, id); err != nil {
			return store.TableData{}, fmt.Errorf("load table %s: %w", id, withUnavailable(err))
		}
	}
	var td store.TableData
	err := d.read(ctx, func(tx pgx.Tx) error {
		var closed string
		row := tx.QueryRow(ctx, "SELECT "+tableCols+", paused, COALESCE(closed_at, '') FROM tables WHERE id = $1", id)
		t, err := scanTable(row, &td.Flags.Paused, &closed)
		if errors.Is(err, pgx.ErrNoRows) {
			return tableNotFound(id)
		}
		if err != nil {
			return err
		}
		td.Table = t
		if closed != "" {
			if td.Flags.ClosedAt, err = parseTime(closed); err != nil {
				return fmt.Errorf("table %s: closed_at: %w", id, err)
			}
			td.Flags.Closed = true
		}
		if td.State, err = loadState(ctx, tx, t); err != nil {
			return err
		}
		var lastTurn string
		if err := tx.QueryRow(ctx, "SELECT COALESCE((SELECT MAX(seq) FROM events WHERE table_id = $1), 0), "+lastTurnAt+" FROM tables t WHERE t.id = $1", id).
			Scan(&td.Seq, &lastTurn); err != nil {
			return fmt.Errorf("last seq: %w", err)
		}
		if td.LastTurnAt, err = parseOptTime(lastTurn); err != nil {
			return fmt.Errorf("last turn: %w", err)
		}
		if td.Seats, err = loadSeats(ctx, tx, id); err != nil {
			return err
		}
		if td.Pending, err = loadPending(ctx, tx, id); err != nil {
			return err
		}
		td.RecentActs, err = loadRecentActs(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.TableData{}, fmt.Errorf("load table %s: %w", id, withUnavailable(err))
	}
	return td, nil
}

// loadRecentActs returns the last store.RecentActsPerPlayer closed actions
// of each player at table id, newest (last closed) first.
func loadRecentActs(ctx context.Context, tx pgx.Tx, id string) ([]store.ClosedAct, error) {
	var out []store.ClosedAct
	q := `SELECT player_id, client_id, state FROM (
	SELECT player_id, client_id, state, resolved_at, created_at, id,
		row_number() OVER (PARTITION BY player_id ORDER BY resolved_at DESC, created_at DESC, id DESC) AS n
	FROM pending_actions WHERE table_id = $1 AND status = 'resolved') r
WHERE n <= $2 ORDER BY resolved_at DESC, created_at DESC, id DESC`
	err := each(ctx, tx, q, []any{id, store.RecentActsPerPlayer}, func(r pgx.Rows) error {
		var a store.ClosedAct
		if err := r.Scan(&a.PlayerID, &a.ClientID, &a.State); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recent actions: %w", err)
	}
	return out, nil
}

func loadSeats(ctx context.Context, tx pgx.Tx, id string) ([]engine.Seat, error) {
	var out []engine.Seat
	q := `SELECT s.seat, s.player_id, COALESCE(p.name, ''), s.character_id, s.joined_at
FROM seats s LEFT JOIN players p ON p.id = s.player_id WHERE s.table_id = $1`
	err := each(ctx, tx, q, []any{id}, func(r pgx.Rows) error {
		var s engine.Seat
		var joined string
		if err := r.Scan(&s.Seat, &s.PlayerID, &s.PlayerName, &s.CharacterID, &joined); err != nil {
			return err
		}
		var err error
		if s.JoinedAt, err = parseTime(joined); err != nil {
			return fmt.Errorf("seat %s: %w", s.Seat, err)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read seats: %w", err)
	}
	slices.SortFunc(out, func(a, b engine.Seat) int { return seatCompare(a.Seat, b.Seat) })
	return out, nil
}

func loadPending(ctx context.Context, tx pgx.Tx, id string) ([]engine.PendingAction, error) {
	var out []engine.PendingAction
	q := `SELECT id, player_id, character_id, seat, client_id, text, status, created_at, kind
FROM pending_actions WHERE table_id = $1 AND status = 'pending' ORDER BY created_at, id`
	err := each(ctx, tx, q, []any{id}, func(r pgx.Rows) error {
		var p engine.PendingAction
		var created string
		if err := r.Scan(&p.ID, &p.PlayerID, &p.CharacterID, &p.Seat, &p.ClientID, &p.Text, &p.Status, &created, &p.Kind); err != nil {
			return err
		}
		var err error
		if p.CreatedAt, err = parseTime(created); err != nil {
			return fmt.Errorf("pending action %s: %w", p.ID, err)
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pending actions: %w", err)
	}
	return out, nil
}

// scanTable scans the tableCols of r, then extra.
func scanTable(r pgx.Row, extra ...any) (engine.Table, error) {
	var t engine.Table
	var created string
	dest := append([]any{&t.ID, &t.Name, &t.Adventure, &t.Config.Ruleset, &t.Config.CombatMode,
		&t.Config.TurnTimeoutS, &t.Seats, &t.OwnerID, &created, &t.Private, &t.Config.NPCHP}, extra...)
	if err := r.Scan(dest...); err != nil {
		return t, err
	}
	t.Config.NPCHP = npcHPField(t.Config.NPCHP)
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return t, fmt.Errorf("table %s: created_at: %w", t.ID, err)
	}
	return t, nil
}
