package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Adventures players write (PROTOCOL.md "Adventures"), the copy each table
// keeps of the one it was made from, and a table's shops and encounters.

const adventureCols = "a.id, a.author_id, COALESCE(p.name, ''), a.title, a.summary, a.source, a.forked_from, a.hidden, a.created_at, a.updated_at"

const adventureFrom = " FROM adventures a LEFT JOIN players p ON p.id = a.author_id"

// CreateAdventure stores a new adventure. It returns an ECONFLICT
// *engine.Error if the id is taken. Safe for concurrent use.
func (d *DB) CreateAdventure(ctx context.Context, a store.Adventure) error {
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.conn.ExecContext(w.ctx, `INSERT INTO adventures (id, author_id, title, summary, source, forked_from, hidden, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)`, a.ID, a.AuthorID, a.Title, a.Summary, string(a.Source), a.ForkedFrom,
			formatTime(a.CreatedAt), formatTime(a.CreatedAt))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "An adventure with the id %q exists already.", a.ID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create adventure %s: %w", a.ID, err)
	}
	return nil
}

// ReplaceAdventure replaces the title, summary and source of adventure
// a.ID (and shows it again if it was hidden). ENOTFOUND if there is none.
// Safe for concurrent use.
func (d *DB) ReplaceAdventure(ctx context.Context, a store.Adventure) error {
	return d.changeAdventure(ctx, a.ID, "UPDATE adventures SET title = ?, summary = ?, source = ?, hidden = 0, updated_at = ? WHERE id = ?",
		a.Title, a.Summary, string(a.Source), formatTime(a.UpdatedAt), a.ID)
}

// HideAdventure hides adventure id from the list and from new tables.
// ENOTFOUND if there is none. Safe for concurrent use.
func (d *DB) HideAdventure(ctx context.Context, id string) error {
	return d.changeAdventure(ctx, id, "UPDATE adventures SET hidden = 1 WHERE id = ?", id)
}

func (d *DB) changeAdventure(ctx context.Context, id, q string, args ...any) error {
	err := d.write(ctx, func(w *writeTx) error {
		res, err := w.conn.ExecContext(w.ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return engine.Errorf(engine.ENOTFOUND, "No adventure %q.", id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("change adventure %s: %w", id, err)
	}
	return nil
}

// Adventure returns adventure id, hidden or not, or an ENOTFOUND
// *engine.Error. Safe for concurrent use.
func (d *DB) Adventure(ctx context.Context, id string) (store.Adventure, error) {
	a, err := scanAdventure(d.reader.QueryRowContext(ctx, "SELECT "+adventureCols+adventureFrom+" WHERE a.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Adventure{}, engine.Errorf(engine.ENOTFOUND, "No adventure %q.", id)
	}
	if err != nil {
		return store.Adventure{}, fmt.Errorf("adventure %s: %w", id, err)
	}
	return a, nil
}

// Adventures lists the adventures not hidden, oldest first, with their
// sources. Safe for concurrent use.
func (d *DB) Adventures(ctx context.Context) ([]store.Adventure, error) {
	var out []store.Adventure
	err := each(ctx, d.reader, "SELECT "+adventureCols+adventureFrom+" WHERE a.hidden = 0 ORDER BY a.created_at, a.rowid", nil, func(r *sql.Rows) error {
		a, err := scanAdventure(r)
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list adventures: %w", err)
	}
	return out, nil
}

func scanAdventure(r rowScanner) (store.Adventure, error) {
	var a store.Adventure
	var src, created, updated string
	if err := r.Scan(&a.ID, &a.AuthorID, &a.AuthorName, &a.Title, &a.Summary, &src, &a.ForkedFrom, &a.Hidden, &created, &updated); err != nil {
		return a, err
	}
	a.Source = []byte(src)
	var err error
	if a.CreatedAt, err = parseTime(created); err != nil {
		return a, err
	}
	a.UpdatedAt, err = parseTime(updated)
	return a, err
}

// AdventureTables counts the tables made from each adventure, by id.
// Safe for concurrent use.
func (d *DB) AdventureTables(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	err := each(ctx, d.reader, "SELECT adventure, COUNT(*) FROM tables GROUP BY adventure", nil, func(r *sql.Rows) error {
		var id string
		var n int
		if err := r.Scan(&id, &n); err != nil {
			return err
		}
		out[id] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count tables by adventure: %w", err)
	}
	return out, nil
}

// AdventureTableCount counts the tables made from adventure id (by the
// tables_adventure index), for one adventure's page. Safe for concurrent
// use.
func (d *DB) AdventureTableCount(ctx context.Context, id string) (int, error) {
	var n int
	if err := d.reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM tables WHERE adventure = ?", id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tables of adventure %s: %w", id, err)
	}
	return n, nil
}

// KeepTableAdventure stores the copy of the adventure table tableID was
// made from. ENOTFOUND if there is no such table. Safe for concurrent use.
func (d *DB) KeepTableAdventure(ctx context.Context, tableID, adventureID string, source []byte) error {
	err := d.write(ctx, func(w *writeTx) error {
		_, err := w.conn.ExecContext(w.ctx, "INSERT OR REPLACE INTO table_adventures (table_id, adventure_id, source) VALUES (?, ?, ?)",
			tableID, adventureID, string(source))
		if isForeignKey(err) {
			return tableNotFound(tableID)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("keep the adventure of table %s: %w", tableID, err)
	}
	return nil
}

// TableAdventure returns the copy of the adventure table tableID was made
// from, or an ENOTFOUND *engine.Error if none was kept. Safe for concurrent
// use.
func (d *DB) TableAdventure(ctx context.Context, tableID string) (string, []byte, error) {
	var id, src string
	err := d.reader.QueryRowContext(ctx, "SELECT adventure_id, source FROM table_adventures WHERE table_id = ?", tableID).Scan(&id, &src)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, engine.Errorf(engine.ENOTFOUND, "No adventure kept for table %q.", tableID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("adventure of table %s: %w", tableID, err)
	}
	return id, []byte(src), nil
}

// writeTrade stores a table's shops and encounters when the whole state
// is written (a new table): the game never changes them afterwards.
func writeTrade(w *writeTx, id string, st, prev *engine.State) error {
	if prev != nil && maps.EqualFunc(prev.World.Shops, st.World.Shops, func(a, b *engine.Shop) bool { return a == b || a != nil && b != nil && a.Keeper == b.Keeper }) &&
		len(prev.World.Encounters) == len(st.World.Encounters) {
		return nil
	}
	if len(st.World.Shops) == 0 && len(st.World.Encounters) == 0 && prev == nil {
		return nil
	}
	_, err := w.conn.ExecContext(w.ctx, `INSERT INTO world_trade (table_id, shops, encounters) VALUES (?, ?, ?)
		ON CONFLICT (table_id) DO UPDATE SET shops = excluded.shops, encounters = excluded.encounters`,
		id, plainJSON(st.World.Shops), plainJSON(st.World.Encounters))
	if err != nil {
		return fmt.Errorf("write shops: %w", err)
	}
	return nil
}

func loadTrade(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	var shops, encs string
	err := tx.QueryRowContext(ctx, "SELECT shops, encounters FROM world_trade WHERE table_id = ?", id).Scan(&shops, &encs)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read shops: %w", err)
	}
	return errors.Join(unjson(shops, &st.World.Shops, "shops"), unjson(encs, &st.World.Encounters, "encounters"))
}
