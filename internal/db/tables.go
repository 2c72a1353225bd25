package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Columns of the world and party tables after (table_id, id), in the order
// writeState binds them and loadState scans them.
var (
	characterCols = []string{"player_id", "seat", "name", "class", "backstory", "level", "xp", "hp", "max_hp", "gold", "stats", "weapon", "armour", "location", "statuses"}
	locationCols  = []string{"name", "description", "exits"}
	npcCols       = []string{"name", "kind", "location", "hostile", "behavior", "disposition", "faction", "personality", "tactics", "secret", "lines", "level", "hp", "max_hp", "stats", "weapon", "armour", "gold", "hidden", "statuses"}
	templateCols  = []string{"name", "category", "description", "value"}
	itemCols      = []string{"template", "name", "owner_type", "owner_id", "buffs", "flaws"}
	questCols     = []string{"name", "description", "giver", "status", "reward_xp", "reward_gold", "requires"}
)

const tableCols = "id, name, adventure, ruleset, combat_mode, turn_timeout_s, seats, owner_id, created_at"

var (
	qInsertTable       = "INSERT INTO tables (" + tableCols + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
	qUpdateTableConfig = "UPDATE tables SET ruleset = ?, combat_mode = ?, turn_timeout_s = ? WHERE id = ?"

	qUpsertCharacter  = upsertSQL("characters", characterCols)
	qDeleteCharacters = deleteMissingSQL("characters", "id")
	qUpsertLocation   = upsertSQL("locations", locationCols)
	qDeleteLocations  = deleteMissingSQL("locations", "id")
	qUpsertNPC        = upsertSQL("npcs", npcCols)
	qDeleteNPCs       = deleteMissingSQL("npcs", "id")
	qUpsertTemplate   = upsertSQL("item_templates", templateCols)
	qDeleteTemplates  = deleteMissingSQL("item_templates", "id")
	qUpsertItem       = upsertSQL("items", itemCols)
	qDeleteItems      = deleteMissingSQL("items", "id")
	qUpsertQuest      = upsertSQL("quests", questCols)
	qDeleteQuests     = deleteMissingSQL("quests", "id")

	qUpsertRelationship = `INSERT INTO relationships (table_id, a, b, value) VALUES (?, ?, ?, ?)
ON CONFLICT (table_id, a, b) DO UPDATE SET value = excluded.value WHERE relationships.value IS NOT excluded.value`
	// a holds no "|" (the key is cut at the first one), so a||'|'||b is the key.
	qDeleteRelationships = deleteMissingSQL("relationships", "a || '|' || b")

	qUpsertGameState = `INSERT INTO game_state (table_id, game, rng, world_start, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (table_id) DO UPDATE SET game = excluded.game, rng = excluded.rng, world_start = excluded.world_start, updated_at = excluded.updated_at`
)

// upsertSQL inserts a (table_id, id, cols...) row or updates it, but only
// when a value changed: unchanged rows are not rewritten, which keeps the
// WAL small when a turn touches a few of the world's rows.
func upsertSQL(table string, cols []string) string {
	var set, old, neu []string
	for _, c := range cols {
		set = append(set, c+" = excluded."+c)
		old = append(old, table+"."+c)
		neu = append(neu, "excluded."+c)
	}
	all := append([]string{"table_id", "id"}, cols...)
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (?%s)\nON CONFLICT (table_id, id) DO UPDATE SET %s\nWHERE (%s) IS NOT (%s)",
		table, strings.Join(all, ", "), strings.Repeat(", ?", len(all)-1),
		strings.Join(set, ", "), strings.Join(old, ", "), strings.Join(neu, ", "))
}

// deleteMissingSQL deletes a table's rows whose key is not in a JSON array.
func deleteMissingSQL(table, key string) string {
	return fmt.Sprintf("DELETE FROM %s WHERE table_id = ? AND %s NOT IN (SELECT value FROM json_each(?))", table, key)
}

func selectSQL(table string, cols []string) string {
	return "SELECT id, " + strings.Join(cols, ", ") + " FROM " + table + " WHERE table_id = ?"
}

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
			t.Config.TurnTimeoutS, t.Seats, t.OwnerID, formatTime(t.CreatedAt))
		if isUnique(err) {
			return engine.Errorf(engine.ECONFLICT, "table %s already exists", t.ID)
		}
		if err != nil {
			return err
		}
		if err := writeState(w, t.ID, st, now); err != nil {
			return err
		}
		return insertEvents(w, t.ID, evs)
	})
	if err != nil {
		return fmt.Errorf("create table %s: %w", t.ID, err)
	}
	return nil
}

// writeState makes the stored rows of table id equal to st: it upserts
// every row of the party and the world, deletes those st no longer has, and
// upserts the game state. It returns ENOTFOUND if the table does not exist.
func writeState(w *writeTx, id string, st *engine.State, now string) error {
	res, err := w.exec(qUpdateTableConfig, st.Config.Ruleset, st.Config.CombatMode, st.Config.TurnTimeoutS, id)
	if err != nil {
		return fmt.Errorf("update config: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update config: %w", err)
	} else if n == 0 {
		return tableNotFound(id)
	}

	ids := make([]string, 0, len(st.Party))
	for _, c := range st.Party {
		if _, err := w.exec(qUpsertCharacter, id, c.ID, c.PlayerID, c.Seat, c.Name, c.Class, c.Backstory,
			c.Level, c.XP, c.HP, c.MaxHP, c.Gold, plainJSON(c.Stats), c.Weapon, c.Armour, c.Location,
			plainJSON(c.Statuses)); err != nil {
			return fmt.Errorf("write character %s: %w", c.ID, err)
		}
		ids = append(ids, c.ID)
	}
	if err := deleteMissing(w, qDeleteCharacters, id, ids, "characters"); err != nil {
		return err
	}

	wd := &st.World
	ids = ids[:0]
	for _, l := range wd.Locations {
		if _, err := w.exec(qUpsertLocation, id, l.ID, l.Name, l.Description, plainJSON(l.Exits)); err != nil {
			return fmt.Errorf("write location %s: %w", l.ID, err)
		}
		ids = append(ids, l.ID)
	}
	if err := deleteMissing(w, qDeleteLocations, id, ids, "locations"); err != nil {
		return err
	}

	ids = ids[:0]
	for _, n := range wd.NPCs {
		if _, err := w.exec(qUpsertNPC, id, n.ID, n.Name, n.Kind, n.Location, n.Hostile, n.Behavior,
			n.Disposition, n.Faction, n.Personality, n.Tactics, n.Secret, plainJSON(n.Lines), n.Level,
			n.HP, n.MaxHP, plainJSON(n.Stats), n.Weapon, n.Armour, n.Gold, n.Hidden,
			plainJSON(n.Statuses)); err != nil {
			return fmt.Errorf("write npc %s: %w", n.ID, err)
		}
		ids = append(ids, n.ID)
	}
	if err := deleteMissing(w, qDeleteNPCs, id, ids, "npcs"); err != nil {
		return err
	}

	ids = ids[:0]
	for _, t := range wd.Templates {
		if _, err := w.exec(qUpsertTemplate, id, t.ID, t.Name, t.Category, t.Description, t.Value); err != nil {
			return fmt.Errorf("write item template %s: %w", t.ID, err)
		}
		ids = append(ids, t.ID)
	}
	if err := deleteMissing(w, qDeleteTemplates, id, ids, "item templates"); err != nil {
		return err
	}

	ids = ids[:0]
	for _, it := range wd.Items {
		if _, err := w.exec(qUpsertItem, id, it.ID, it.Template, it.Name, it.OwnerType, it.OwnerID,
			plainJSON(it.Buffs), plainJSON(it.Flaws)); err != nil {
			return fmt.Errorf("write item %s: %w", it.ID, err)
		}
		ids = append(ids, it.ID)
	}
	if err := deleteMissing(w, qDeleteItems, id, ids, "items"); err != nil {
		return err
	}

	ids = ids[:0]
	for _, q := range wd.Quests {
		if _, err := w.exec(qUpsertQuest, id, q.ID, q.Name, q.Description, q.Giver, q.Status, q.RewardXP, q.RewardGold, q.Requires); err != nil {
			return fmt.Errorf("write quest %s: %w", q.ID, err)
		}
		ids = append(ids, q.ID)
	}
	if err := deleteMissing(w, qDeleteQuests, id, ids, "quests"); err != nil {
		return err
	}

	ids = ids[:0]
	for key, v := range wd.Relationships {
		a, b, ok := strings.Cut(key, "|")
		if !ok {
			return engine.Errorf(engine.EINVALID, "relationship key %q is not \"a|b\"", key)
		}
		if _, err := w.exec(qUpsertRelationship, id, a, b, v); err != nil {
			return fmt.Errorf("write relationship %s: %w", key, err)
		}
		ids = append(ids, key)
	}
	if err := deleteMissing(w, qDeleteRelationships, id, ids, "relationships"); err != nil {
		return err
	}

	if _, err := w.exec(qUpsertGameState, id, plainJSON(st.Game), plainJSON(st.RNG), wd.Start, now); err != nil {
		return fmt.Errorf("write game state: %w", err)
	}
	return nil
}

func deleteMissing(w *writeTx, q, tableID string, keep []string, what string) error {
	if _, err := w.exec(q, tableID, plainJSON(keep)); err != nil {
		return fmt.Errorf("delete stale %s: %w", what, err)
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

// LoadTable returns everything needed to bring a table back, read from one
// snapshot: its settings, its state (Catalogue not set; Config from the
// table's row; Party ordered by seat), the last event seq (0 if none), its
// seats ordered by seat with each player's name, and its unresolved pending
// actions, oldest first. It returns an ENOTFOUND *engine.Error if there is
// no such table. The caller owns the returned values. Safe for concurrent
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
		if td.State, err = loadState(ctx, tx, t); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_id = ?", id).Scan(&td.Seq); err != nil {
			return fmt.Errorf("last seq: %w", err)
		}
		if td.Seats, err = loadSeats(ctx, tx, id); err != nil {
			return err
		}
		td.Pending, err = loadPending(ctx, tx, id)
		return err
	})
	if err != nil {
		return store.TableData{}, fmt.Errorf("load table %s: %w", id, err)
	}
	return td, nil
}

func loadState(ctx context.Context, tx *sql.Tx, t engine.Table) (*engine.State, error) {
	id := t.ID
	st := &engine.State{
		Config: t.Config,
		World: engine.World{
			Locations:     map[string]*engine.Location{},
			NPCs:          map[string]*engine.NPC{},
			Templates:     map[string]*engine.ItemTemplate{},
			Items:         map[string]*engine.Item{},
			Quests:        map[string]*engine.Quest{},
			Relationships: map[string]int{},
		},
	}
	var game, rng string
	err := tx.QueryRowContext(ctx, "SELECT game, rng, world_start FROM game_state WHERE table_id = ?", id).Scan(&game, &rng, &st.World.Start)
	if err != nil {
		return nil, fmt.Errorf("read game state: %w", err)
	}
	if err := errors.Join(unjson(game, &st.Game, "game"), unjson(rng, &st.RNG, "rng")); err != nil {
		return nil, fmt.Errorf("read game state: %w", err)
	}
	args := []any{id}

	st.Party = []*engine.Character{}
	err = each(ctx, tx, selectSQL("characters", characterCols), args, func(r *sql.Rows) error {
		var c engine.Character
		var stats, statuses string
		if err := r.Scan(&c.ID, &c.PlayerID, &c.Seat, &c.Name, &c.Class, &c.Backstory, &c.Level, &c.XP, &c.HP,
			&c.MaxHP, &c.Gold, &stats, &c.Weapon, &c.Armour, &c.Location, &statuses); err != nil {
			return err
		}
		if err := errors.Join(unjson(stats, &c.Stats, "stats"), unjson(statuses, &c.Statuses, "statuses")); err != nil {
			return fmt.Errorf("character %s: %w", c.ID, err)
		}
		st.Party = append(st.Party, &c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read characters: %w", err)
	}
	slices.SortStableFunc(st.Party, func(a, b *engine.Character) int {
		switch {
		case engine.SeatLess(a.Seat, b.Seat):
			return -1
		case engine.SeatLess(b.Seat, a.Seat):
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})

	err = each(ctx, tx, selectSQL("locations", locationCols), args, func(r *sql.Rows) error {
		var l engine.Location
		var exits string
		if err := r.Scan(&l.ID, &l.Name, &l.Description, &exits); err != nil {
			return err
		}
		if err := unjson(exits, &l.Exits, "exits"); err != nil {
			return fmt.Errorf("location %s: %w", l.ID, err)
		}
		st.World.Locations[l.ID] = &l
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read locations: %w", err)
	}

	err = each(ctx, tx, selectSQL("npcs", npcCols), args, func(r *sql.Rows) error {
		var n engine.NPC
		var lines, stats, statuses string
		if err := r.Scan(&n.ID, &n.Name, &n.Kind, &n.Location, &n.Hostile, &n.Behavior, &n.Disposition,
			&n.Faction, &n.Personality, &n.Tactics, &n.Secret, &lines, &n.Level, &n.HP, &n.MaxHP, &stats,
			&n.Weapon, &n.Armour, &n.Gold, &n.Hidden, &statuses); err != nil {
			return err
		}
		if err := errors.Join(unjson(lines, &n.Lines, "lines"), unjson(stats, &n.Stats, "stats"),
			unjson(statuses, &n.Statuses, "statuses")); err != nil {
			return fmt.Errorf("npc %s: %w", n.ID, err)
		}
		st.World.NPCs[n.ID] = &n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read npcs: %w", err)
	}

	err = each(ctx, tx, selectSQL("item_templates", templateCols), args, func(r *sql.Rows) error {
		var t engine.ItemTemplate
		if err := r.Scan(&t.ID, &t.Name, &t.Category, &t.Description, &t.Value); err != nil {
			return err
		}
		st.World.Templates[t.ID] = &t
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read item templates: %w", err)
	}

	err = each(ctx, tx, selectSQL("items", itemCols), args, func(r *sql.Rows) error {
		var it engine.Item
		var buffs, flaws string
		if err := r.Scan(&it.ID, &it.Template, &it.Name, &it.OwnerType, &it.OwnerID, &buffs, &flaws); err != nil {
			return err
		}
		if err := errors.Join(unjson(buffs, &it.Buffs, "buffs"), unjson(flaws, &it.Flaws, "flaws")); err != nil {
			return fmt.Errorf("item %s: %w", it.ID, err)
		}
		st.World.Items[it.ID] = &it
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read items: %w", err)
	}

	err = each(ctx, tx, selectSQL("quests", questCols), args, func(r *sql.Rows) error {
		var q engine.Quest
		if err := r.Scan(&q.ID, &q.Name, &q.Description, &q.Giver, &q.Status, &q.RewardXP, &q.RewardGold, &q.Requires); err != nil {
			return err
		}
		st.World.Quests[q.ID] = &q
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read quests: %w", err)
	}

	err = each(ctx, tx, "SELECT a, b, value FROM relationships WHERE table_id = ?", args, func(r *sql.Rows) error {
		var a, b string
		var v int
		if err := r.Scan(&a, &b, &v); err != nil {
			return err
		}
		st.World.Relationships[a+"|"+b] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read relationships: %w", err)
	}
	return st, nil
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
	slices.SortFunc(out, func(a, b engine.Seat) int {
		switch {
		case engine.SeatLess(a.Seat, b.Seat):
			return -1
		case engine.SeatLess(b.Seat, a.Seat):
			return 1
		}
		return 0
	})
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

type rowScanner interface{ Scan(dest ...any) error }

func scanTable(r rowScanner) (engine.Table, error) {
	var t engine.Table
	var created string
	if err := r.Scan(&t.ID, &t.Name, &t.Adventure, &t.Config.Ruleset, &t.Config.CombatMode,
		&t.Config.TurnTimeoutS, &t.Seats, &t.OwnerID, &created); err != nil {
		return t, err
	}
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return t, fmt.Errorf("table %s: created_at: %w", t.ID, err)
	}
	return t, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// each runs q and calls fn for every row.
func each(ctx context.Context, db querier, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func unjson(s string, v any, what string) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}
