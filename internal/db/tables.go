package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/store"
)

const tableCols = "id, name, adventure, ruleset, combat_mode, turn_timeout_s, seats, owner_id, created_at, private, npc_hp"

// tCols is tableCols of the tables row named t in a join, as scanTable
// reads them.
var tCols = "t." + strings.ReplaceAll(tableCols, ", ", ", t.")

var qInsertTable = "INSERT INTO tables (" + tableCols + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// CreateTable stores a new table, its initial state and first events in one
// transaction. The stored configuration is st.Config (the state's, with the
// engine's defaults), which Tables and LoadTable then return. It returns an
// ECONFLICT *engine.Error if a table with t.ID exists, EINVALID if st is
// nil. Safe for concurrent use.
func (d *DB) CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error {
	if st == nil {
		return engine.Errorf(engine.EINVALID, "table %s has no state", t.ID)
	}
	now := formatTime(d.now())
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.exec(qInsertTable, t.ID, t.Name, t.Adventure, t.Config.Ruleset, t.Config.CombatMode,
			t.Config.TurnTimeoutS, t.Seats, t.OwnerID, formatTime(t.CreatedAt), t.Private, npcHPColumn(t.Config.NPCHP))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "table %s already exists", t.ID)
		}
		if err != nil {
			return err
		}
		if err := writeState(w, t.ID, st, nil, now); err != nil {
			return err
		}
		// The table's first commit then writes only what it changes,
		// not every row again (a burst of new tables' first sits).
		w.afterCommit(func() { d.committer.wrote(t.ID, st.Clone()) })
		return insertEvents(w, t.ID, evs)
	})
	if err != nil {
		return fmt.Errorf("create table %s: %w", t.ID, err)
	}
	return nil
}

// Tables lists every stored table, oldest first. Safe for concurrent use.
func (d *DB) Tables(ctx context.Context) ([]engine.Table, error) {
	var out []engine.Table
	err := each(ctx, d.reader, "SELECT "+tableCols+" FROM tables ORDER BY created_at, rowid", nil, func(r *sql.Rows) error {
		t, err := scanTable(r)
		if err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return out, nil
}

// lastTurnAt selects the time of the last turn's narration at table t (empty
// if none; the opening narration, turn t0, is not a turn, as in
// TurnTimes), by the events_narration index.
const lastTurnAt = `COALESCE((SELECT e.ts FROM events e WHERE e.table_id = t.id AND e.kind = 'narration'
	AND e.turn NOT IN ('', 't0') ORDER BY e.seq DESC LIMIT 1), '')`

// TableInfos returns what the lobby and a lazily loading hub need of every
// stored table, oldest first, in one query and without loading any state:
// its settings, game mode, seats taken, whether an action is open, and the
// operator's marks. Safe for concurrent use.
func (d *DB) TableInfos(ctx context.Context) ([]store.TableInfo, error) {
	q := `SELECT ` + tCols + `, COALESCE(json_extract(g.game, '$.mode'), ''),
		(SELECT count(*) FROM seats s WHERE s.table_id = t.id),
		EXISTS (SELECT 1 FROM pending_actions p WHERE p.table_id = t.id AND p.status = 'pending'),
		t.paused, COALESCE(t.closed_at, '')
		FROM tables t LEFT JOIN game_state g ON g.table_id = t.id ORDER BY t.created_at, t.rowid`
	var out []store.TableInfo
	err := each(ctx, d.reader, q, nil, func(r *sql.Rows) error {
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

// TableProgress returns how far every stored table has played, by id, in
// one query: what the operator's list shows of the tables that are not
// loaded. It is apart from TableInfos, which the lobby and start-up read
// and which need none of it. Safe for concurrent use.
func (d *DB) TableProgress(ctx context.Context) (map[string]store.TableProgress, error) {
	q := `SELECT t.id, COALESCE(json_extract(g.game, '$.turn'), 0), json_extract(g.game, '$.combat.round'), ` + lastTurnAt + `
		FROM tables t LEFT JOIN game_state g ON g.table_id = t.id`
	out := map[string]store.TableProgress{}
	err := each(ctx, d.reader, q, nil, func(r *sql.Rows) error {
		var id, lastTurn string
		var p store.TableProgress
		var round sql.NullInt64
		if err := r.Scan(&id, &p.Turn, &round, &lastTurn); err != nil {
			return err
		}
		if round.Valid {
			n := int(round.Int64)
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

// LoadTable returns everything needed to bring a table back, read from one
// snapshot: its settings, its state (Catalogue not set; Config from the
// table's row; Party ordered by seat), the last event seq (0 if none), its
// seats ordered by seat with each player's name, and its unresolved pending
// actions, oldest first. It returns an ENOTFOUND *engine.Error if there is
// no such table. Flags are the operator's marks. The caller owns the returned values. Safe for concurrent
// use.
func (d *DB) LoadTable(ctx context.Context, id string) (store.TableData, error) {
	var td store.TableData
	err := d.read(ctx, func(tx *sql.Tx) error {
		t, err := scanTable(tx.QueryRowContext(ctx, "SELECT "+tableCols+" FROM tables WHERE id = ?", id))
		if errors.Is(err, sql.ErrNoRows) {
			return tableNotFound(id)
		}
		if err != nil {
			return err
		}
		td.Table = t
		var closed string
		if err := tx.QueryRowContext(ctx, "SELECT paused, COALESCE(closed_at, '') FROM tables WHERE id = ?", id).Scan(&td.Flags.Paused, &closed); err != nil {
			return err
		}
		if closed != "" {
			if td.Flags.ClosedAt, err = parseTime(closed); err != nil {
				return fmt.Errorf("table %s: closed_at: %w", id, err)
			}
			td.Flags.Closed = true
		}
		if td.State, err = loadState(ctx, tx, t); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_id = ?", id).Scan(&td.Seq); err != nil {
			return fmt.Errorf("last seq: %w", err)
		}
		var lastTurn string
		if err := tx.QueryRowContext(ctx, "SELECT "+lastTurnAt+" FROM tables t WHERE t.id = ?", id).Scan(&lastTurn); err != nil {
			return fmt.Errorf("last turn: %w", err)
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
		return store.TableData{}, fmt.Errorf("load table %s: %w", id, err)
	}
	return td, nil
}

// loadRecentActs returns the last store.RecentActsPerPlayer closed actions
// of each player at table id, newest first.
func loadRecentActs(ctx context.Context, tx *sql.Tx, id string) ([]store.ClosedAct, error) {
	var out []store.ClosedAct
	q := `SELECT player_id, client_id, state FROM (
	SELECT player_id, client_id, state, rowid AS r,
		row_number() OVER (PARTITION BY player_id ORDER BY rowid DESC) AS n
	FROM pending_actions WHERE table_id = ? AND status = 'resolved')
WHERE n <= ? ORDER BY r DESC`
	err := each(ctx, tx, q, []any{id, store.RecentActsPerPlayer}, func(r *sql.Rows) error {
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

func loadSeats(ctx context.Context, tx *sql.Tx, id string) ([]engine.Seat, error) {
	var out []engine.Seat
	q := `SELECT s.seat, s.player_id, COALESCE(p.name, ''), s.character_id, s.joined_at
FROM seats s LEFT JOIN players p ON p.id = s.player_id WHERE s.table_id = ?`
	err := each(ctx, tx, q, []any{id}, func(r *sql.Rows) error {
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

func loadPending(ctx context.Context, tx *sql.Tx, id string) ([]engine.PendingAction, error) {
	var out []engine.PendingAction
	// The literal 'pending' lets SQLite use the partial index.
	q := `SELECT id, player_id, character_id, seat, client_id, text, status, created_at, kind
FROM pending_actions WHERE table_id = ? AND status = 'pending' ORDER BY created_at, rowid`
	err := each(ctx, tx, q, []any{id}, func(r *sql.Rows) error {
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
func scanTable(r rowScanner, extra ...any) (engine.Table, error) {
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

// seatCompare orders seats as engine.SeatLess does, for the slices sorts.
func seatCompare(a, b string) int {
	switch {
	case engine.SeatLess(a, b):
		return -1
	case engine.SeatLess(b, a):
		return 1
	}
	return 0
}
