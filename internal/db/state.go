package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
)

// A table's state is stored as rows: its config on the tables row, one row
// per character (this file), per world entity (world.go), and one
// game_state row for the mode, queues, combat and RNG (this file).
// writeState and loadState run one step per kind of row, in the same order.

var (
	qUpdateTableConfig = "UPDATE tables SET ruleset = ?, combat_mode = ?, turn_timeout_s = ?, npc_hp = ? WHERE id = ?"

	qUpsertGameState = `INSERT INTO game_state (table_id, game, rng, world_start, updated_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (table_id) DO UPDATE SET game = excluded.game, rng = excluded.rng, world_start = excluded.world_start, updated_at = excluded.updated_at`

	// characterCols are the columns after (table_id, id), in the order
	// writeParty binds them and loadParty scans them.
	characterCols     = []string{"player_id", "seat", "name", "class", "backstory", "level", "xp", "hp", "max_hp", "gold", "stats", "weapon", "armour", "location", "statuses"}
	qUpsertCharacter  = upsertSQL("characters", characterCols)
	qDeleteCharacters = deleteMissingSQL("characters", "id")
)

// writeState makes the stored rows of table id equal to st. prev is what
// the rows hold already, as the store last wrote them, or nil when that is
// not known: then every row is written. With prev, a row equal in prev and
// st is skipped, and the stale-row delete of a kind runs only when prev has
// a row st no longer has. The game state row is always written. It returns
// ENOTFOUND if the table does not exist.
func writeState(w *writeTx, id string, st, prev *engine.State, now string) error {
	return writeEncodedState(w, id, st, prev, gameRowOf(st), now)
}

// writeEncodedState is writeState with st's game row already encoded.
func writeEncodedState(w *writeTx, id string, st, prev *engine.State, game gameRow, now string) error {
	if prev == nil || prev.Config != st.Config {
		if err := writeConfig(w, id, st.Config); err != nil {
			return err
		}
	}
	for _, write := range []func(*writeTx, string, *engine.State, *engine.State) error{
		writeParty, writeLocations, writeNPCs, writeTemplates, writeItems, writeQuests, writeRelationships, writeTrade,
	} {
		if err := write(w, id, st, prev); err != nil {
			return err
		}
	}
	return writeGame(w, id, st, game, now)
}

// writeRows upserts the rows of cur that differ from prev (all of them
// when full), then deletes the table's stored rows cur does not have if
// full or if prev has one of them. same compares a row of prev with cur's.
func writeRows[V any](w *writeTx, tableID string, cur, prev map[string]V, full bool, same func(a, b V) bool,
	upsert func(key string, v V) error, qDelete, what string) error {
	for k, v := range cur {
		if p, ok := prev[k]; ok && !full && same(p, v) {
			continue
		}
		if err := upsert(k, v); err != nil {
			return err
		}
	}
	stale := full
	for k := range prev {
		if _, ok := cur[k]; !ok {
			stale = true
			break
		}
	}
	if !stale {
		return nil
	}
	keep := make([]string, 0, len(cur))
	for k := range cur {
		keep = append(keep, k)
	}
	return deleteMissing(w, qDelete, tableID, keep, what)
}

// worldOf returns prev's world, or a zero one (nil maps) for a full write.
func worldOf(prev *engine.State) (engine.World, bool) {
	if prev == nil {
		return engine.World{}, true
	}
	return prev.World, false
}

// loadState reads the state of table t (Config from t, Catalogue not set,
// Party ordered by seat).
func loadState(ctx context.Context, tx *sql.Tx, t engine.Table) (*engine.State, error) {
	st := &engine.State{Config: t.Config}
	for _, load := range []func(context.Context, *sql.Tx, string, *engine.State) error{
		loadGame, loadParty, loadLocations, loadNPCs, loadTemplates, loadItems, loadQuests, loadRelationships, loadTrade,
	} {
		if err := load(ctx, tx, t.ID, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// writeConfig stores the state's config on the table's row; ENOTFOUND if
// there is no such table.
func writeConfig(w *writeTx, id string, c engine.Config) error {
	res, err := w.exec(qUpdateTableConfig, c.Ruleset, c.CombatMode, c.TurnTimeoutS, npcHPColumn(c.NPCHP), id)
	if err != nil {
		return fmt.Errorf("update config: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update config: %w", err)
	} else if n == 0 {
		return tableNotFound(id)
	}
	return nil
}

// gameRow is the text of a state's game_state row: its game and RNG as
// JSON.
type gameRow struct{ game, rng string }

func gameRowOf(st *engine.State) gameRow { return gameRow{plainJSON(st.Game), plainJSON(st.RNG)} }

func writeGame(w *writeTx, id string, st *engine.State, game gameRow, now string) error {
	if _, err := w.exec(qUpsertGameState, id, game.game, game.rng, st.World.Start, now); err != nil {
		return fmt.Errorf("write game state: %w", err)
	}
	return nil
}

func loadGame(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	var game, rng string
	err := tx.QueryRowContext(ctx, "SELECT game, rng, world_start FROM game_state WHERE table_id = ?", id).Scan(&game, &rng, &st.World.Start)
	if err != nil {
		return fmt.Errorf("read game state: %w", err)
	}
	if err := errors.Join(unjson(game, &st.Game, "game"), unjson(rng, &st.RNG, "rng")); err != nil {
		return fmt.Errorf("read game state: %w", err)
	}
	return nil
}

func writeParty(w *writeTx, id string, st, prev *engine.State) error {
	cur := make(map[string]*engine.Character, len(st.Party))
	for _, c := range st.Party {
		cur[c.ID] = c
	}
	var old map[string]*engine.Character
	if prev != nil {
		old = make(map[string]*engine.Character, len(prev.Party))
		for _, c := range prev.Party {
			old[c.ID] = c
		}
	}
	return writeRows(w, id, cur, old, prev == nil, sameCharacter, func(_ string, c *engine.Character) error {
		if _, err := w.exec(qUpsertCharacter, id, c.ID, c.PlayerID, c.Seat, c.Name, c.Class, c.Backstory,
			c.Level, c.XP, c.HP, c.MaxHP, c.Gold, plainJSON(c.Stats), c.Weapon, c.Armour, c.Location,
			plainJSON(c.Statuses)); err != nil {
			return fmt.Errorf("write character %s: %w", c.ID, err)
		}
		return nil
	}, qDeleteCharacters, "characters")
}

// loadParty reads the characters ordered by seat, then id.
func loadParty(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.Party = []*engine.Character{}
	err := each(ctx, tx, selectSQL("characters", characterCols), []any{id}, func(r *sql.Rows) error {
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
		return fmt.Errorf("read characters: %w", err)
	}
	slices.SortStableFunc(st.Party, func(a, b *engine.Character) int {
		if c := seatCompare(a.Seat, b.Seat); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

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

// deleteMissing runs a deleteMissingSQL query q: it deletes the rows of
// table tableID whose key is not in keep.
func deleteMissing(w *writeTx, q, tableID string, keep []string, what string) error {
	if _, err := w.exec(q, tableID, plainJSON(keep)); err != nil {
		return fmt.Errorf("delete stale %s: %w", what, err)
	}
	return nil
}
