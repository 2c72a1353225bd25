package pgdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Adventures players write (PROTOCOL.md "Adventures"), the copy each table
// keeps of the one it was made from, and a table's shops and encounters:
// the twins of internal/db/adventures.go.

const adventureCols = "a.id, a.author_id, COALESCE(p.name, ''), a.title, a.summary, a.source, a.forked_from, a.hidden, a.created_at, a.updated_at"

const adventureFrom = " FROM adventures a LEFT JOIN players p ON p.id = a.author_id"

// CreateAdventure stores a new adventure. It returns an ECONFLICT
// *engine.Error if the id is taken. Safe for concurrent use.
func (d *DB) CreateAdventure(ctx context.Context, a store.Adventure) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO adventures (id, author_id, title, summary, source, forked_from, hidden, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, false, $7, $7)`, a.ID, a.AuthorID, a.Title, a.Summary, string(a.Source), a.ForkedFrom,
		formatTime(a.CreatedAt))
	if isUnique(err) {
		err = engine.Errorf(engine.ECONFLICT, "An adventure with the id %q exists already.", a.ID)
	}
	if err != nil {
		return fmt.Errorf("create adventure %s: %w", a.ID, err)
	}
	return nil
}

// ReplaceAdventure replaces the title, summary and source of adventure
// a.ID (and shows it again if it was hidden). ENOTFOUND if there is none.
// Safe for concurrent use.
func (d *DB) ReplaceAdventure(ctx context.Context, a store.Adventure) error {
	return d.changeAdventure(ctx, a.ID, "UPDATE adventures SET title = $1, summary = $2, source = $3, hidden = false, updated_at = $4 WHERE id = $5",
		a.Title, a.Summary, string(a.Source), formatTime(a.UpdatedAt), a.ID)
}

// HideAdventure hides adventure id from the list and from new tables.
// ENOTFOUND if there is none. Safe for concurrent use.
func (d *DB) HideAdventure(ctx context.Context, id string) error {
	return d.changeAdventure(ctx, id, "UPDATE adventures SET hidden = true WHERE id = $1", id)
}

func (d *DB) changeAdventure(ctx context.Context, id, q string, args ...any) error {
	ct, err := d.pool.Exec(ctx, q, args...)
	if err == nil && ct.RowsAffected() == 0 {
		err = engine.Errorf(engine.ENOTFOUND, "No adventure %q.", id)
	}
	if err != nil {
		return fmt.Errorf("change adventure %s: %w", id, err)
	}
	return nil
}

// Adventure returns adventure id, hidden or not, or an ENOTFOUND
// *engine.Error. Safe for concurrent use.
func (d *DB) Adventure(ctx context.Context, id string) (store.Adventure, error) {
	a, err := scanAdventure(d.pool.QueryRow(ctx, "SELECT "+adventureCols+adventureFrom+" WHERE a.id = $1", id))
	if errors.Is(err, pgx.ErrNoRows) {
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
	// There is no rowid to break a tie of created_at as on SQLite: the id
	// does, so the order is still stable.
	err := each(ctx, d.pool, "SELECT "+adventureCols+adventureFrom+" WHERE NOT a.hidden ORDER BY a.created_at, a.id", nil, func(r pgx.Rows) error {
		a, err := scanAdventure(r)
		out = append(out, a)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list adventures: %w", err)
	}
	return out, nil
}

func scanAdventure(r pgx.Row) (store.Adventure, error) {
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
	err := each(ctx, d.pool, "SELECT adventure, COUNT(*) FROM tables GROUP BY adventure", nil, func(r pgx.Rows) error {
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
	if err := d.pool.QueryRow(ctx, "SELECT COUNT(*) FROM tables WHERE adventure = $1", id).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tables of adventure %s: %w", id, err)
	}
	return n, nil
}

// KeepTableAdventure stores the copy of the adventure table tableID was
// made from. ENOTFOUND if there is no such table. Safe for concurrent use.
func (d *DB) KeepTableAdventure(ctx context.Context, tableID, adventureID string, source []byte) error {
	_, err := d.pool.Exec(ctx, `INSERT INTO table_adventures (table_id, adventure_id, source) VALUES ($1, $2, $3)
		ON CONFLICT (table_id) DO UPDATE SET adventure_id = excluded.adventure_id, source = excluded.source`,
		tableID, adventureID, string(source))
	if isForeignKey(err) {
		err = tableNotFound(tableID)
	}
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
	err := d.pool.QueryRow(ctx, "SELECT adventure_id, source FROM table_adventures WHERE table_id = $1", tableID).Scan(&id, &src)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, engine.Errorf(engine.ENOTFOUND, "No adventure kept for table %q.", tableID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("adventure of table %s: %w", tableID, err)
	}
	return id, []byte(src), nil
}

const qUpsertTrade = `INSERT INTO world_trade (table_id, shops, encounters) VALUES ($1, $2, $3)
ON CONFLICT (table_id) DO UPDATE SET shops = excluded.shops, encounters = excluded.encounters`

// writeTrade queues the write of a table's shops and encounters when all
// its rows are written (prev nil in writeState: a new table, or a cache
// lost): the game never changes them once the table is made, so a turn
// need not encode them.
func writeTrade(t *btx, id string, st *engine.State) {
	if len(st.World.Shops) == 0 && len(st.World.Encounters) == 0 {
		return
	}
	t.exec(qUpsertTrade, []any{id, plainJSON(st.World.Shops), plainJSON(st.World.Encounters)}, wrapErr("write shops"))
}

func loadTrade(ctx context.Context, tx pgx.Tx, id string, st *engine.State) error {
	var shops, encs string
	err := tx.QueryRow(ctx, "SELECT shops, encounters FROM world_trade WHERE table_id = $1", id).Scan(&shops, &encs)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read shops: %w", err)
	}
	return errors.Join(unjson(shops, &st.World.Shops, "shops"), unjson(encs, &st.World.Encounters, "encounters"))
}
