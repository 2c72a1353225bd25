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
)

// A table's state is stored as rows, as on SQLite: its config on the
// tables row, one row per character and world entity, and one game_state
// row. The writer keeps, per table, the values it bound last (rowCache),
// so a turn sends only the rows whose values changed.

// rowKind is one kind of a state's rows: its SQL table and the columns
// after table_id, key first.
type rowKind struct {
	table string
	cols  []string
	// key is the SQL expression of a row's key (the cache's key).
	key string
}

const (
	kindCharacters = iota
	kindLocations
	kindNPCs
	kindTemplates
	kindItems
	kindQuests
	kindRelationships
	nKinds
)

var kinds = [nKinds]rowKind{
	kindCharacters:    {"characters", []string{"id", "player_id", "seat", "name", "class", "backstory", "level", "xp", "hp", "max_hp", "gold", "stats", "weapon", "armour", "location", "statuses"}, "id"},
	kindLocations:     {"locations", []string{"id", "name", "description", "exits"}, "id"},
	kindNPCs:          {"npcs", []string{"id", "name", "kind", "location", "hostile", "behavior", "disposition", "faction", "personality", "tactics", "secret", "lines", "level", "hp", "max_hp", "stats", "weapon", "armour", "gold", "hidden", "statuses"}, "id"},
	kindTemplates:     {"item_templates", []string{"id", "name", "category", "description", "value"}, "id"},
	kindItems:         {"items", []string{"id", "template", "name", "owner_type", "owner_id", "buffs", "flaws"}, "id"},
	kindQuests:        {"quests", []string{"id", "name", "description", "giver", "status", "reward_xp", "reward_gold", "requires"}, "id"},
	kindRelationships: {"relationships", []string{"a", "b", "value"}, "a || '|' || b"},
}

// upsertSQL and deleteSQL are each kind's statements.
var upsertSQL, deleteSQL [nKinds]string

func init() {
	for i, k := range kinds {
		keyCols := []string{"id"}
		if i == kindRelationships {
			keyCols = []string{"a", "b"}
		}
		var set, old, neu, params []string
		for _, c := range k.cols[len(keyCols):] {
			set = append(set, c+" = excluded."+c)
			old = append(old, k.table+"."+c)
			neu = append(neu, "excluded."+c)
		}
		for n := range len(k.cols) + 1 {
			params = append(params, fmt.Sprintf("$%d", n+1))
		}
		upsertSQL[i] = fmt.Sprintf("INSERT INTO %s (table_id, %s) VALUES (%s) ON CONFLICT (table_id, %s) DO UPDATE SET %s WHERE (%s) IS DISTINCT FROM (%s)",
			k.table, strings.Join(k.cols, ", "), strings.Join(params, ", "), strings.Join(keyCols, ", "),
			strings.Join(set, ", "), strings.Join(old, ", "), strings.Join(neu, ", "))
		if len(old) == 1 { // a one-column row is not a row constructor
			upsertSQL[i] = strings.Replace(upsertSQL[i], "("+old[0]+") IS DISTINCT FROM ("+neu[0]+")", old[0]+" IS DISTINCT FROM "+neu[0], 1)
		}
		deleteSQL[i] = fmt.Sprintf("DELETE FROM %s WHERE table_id = $1 AND NOT (%s = ANY($2::text[]))", k.table, k.key)
	}
}

// rowCache is a table's state rows as the store last wrote them, under the
// owner epoch it wrote them with: the values bound, by kind and key.
type rowCache struct {
	epoch  int64
	config engine.Config
	rows   [nKinds]map[string][]any
}

// stateRows returns the values of every row of st, by kind and key; EINVALID
// for a relationship key without "|".
func stateRows(st *engine.State) ([nKinds]map[string][]any, error) {
	var out [nKinds]map[string][]any
	for i := range out {
		out[i] = map[string][]any{}
	}
	for _, c := range st.Party {
		out[kindCharacters][c.ID] = []any{c.ID, c.PlayerID, c.Seat, c.Name, c.Class, c.Backstory, c.Level, c.XP, c.HP,
			c.MaxHP, c.Gold, plainJSON(c.Stats), c.Weapon, c.Armour, c.Location, plainJSON(c.Statuses)}
	}
	w := &st.World
	for _, l := range w.Locations {
		out[kindLocations][l.ID] = []any{l.ID, l.Name, l.Description, plainJSON(l.Exits)}
	}
	for _, n := range w.NPCs {
		out[kindNPCs][n.ID] = []any{n.ID, n.Name, n.Kind, n.Location, n.Hostile, n.Behavior, n.Disposition, n.Faction,
			n.Personality, n.Tactics, n.Secret, plainJSON(n.Lines), n.Level, n.HP, n.MaxHP, plainJSON(n.Stats),
			n.Weapon, n.Armour, n.Gold, n.Hidden, plainJSON(n.Statuses)}
	}
	for _, t := range w.Templates {
		out[kindTemplates][t.ID] = []any{t.ID, t.Name, t.Category, t.Description, t.Value}
	}
	for _, it := range w.Items {
		out[kindItems][it.ID] = []any{it.ID, it.Template, it.Name, it.OwnerType, it.OwnerID, plainJSON(it.Buffs), plainJSON(it.Flaws)}
	}
	for _, q := range w.Quests {
		out[kindQuests][q.ID] = []any{q.ID, q.Name, q.Description, q.Giver, q.Status, q.RewardXP, q.RewardGold, q.Requires}
	}
	for key, v := range w.Relationships {
		a, b, ok := strings.Cut(key, "|")
		if !ok {
			return out, engine.Errorf(engine.EINVALID, "relationship key %q is not \"a|b\"", key)
		}
		out[kindRelationships][key] = []any{a, b, v}
	}
	return out, nil
}

// encodedState is a state's rows as the store binds them: the game_state
// row's text and every other row's values (stateRows).
type encodedState struct {
	game, rng string
	rows      [nKinds]map[string][]any
}

// encodeState encodes st for writeState. The writer's callers do it
// before they queue a commit, on their own goroutine: the writer's time is
// every commit's wait.
func encodeState(st *engine.State) (*encodedState, error) {
	rows, err := stateRows(st)
	if err != nil {
		return nil, err
	}
	return &encodedState{game: plainJSON(st.Game), rng: plainJSON(st.RNG), rows: rows}, nil
}

const (
	qUpdateTableConfig = "UPDATE tables SET ruleset = $1, combat_mode = $2, turn_timeout_s = $3, npc_hp = $4 WHERE id = $5"
	qUpsertGameState   = `INSERT INTO game_state (table_id, game, rng, world_start, updated_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (table_id) DO UPDATE SET game = excluded.game, rng = excluded.rng, world_start = excluded.world_start, updated_at = excluded.updated_at`
)

// writeState queues the statements that make table id's rows equal to st
// (encoded as enc) and returns the cache of what they then hold. prev is
// what they hold already (nil: unknown, every row is written and stale
// rows deleted).
func writeState(t *btx, id string, st *engine.State, enc *encodedState, prev *rowCache, now string) *rowCache {
	cur := enc.rows
	if prev == nil || prev.config != st.Config {
		c := st.Config
		t.execJudged(qUpdateTableConfig, []any{c.Ruleset, c.CombatMode, c.TurnTimeoutS, npcHPColumn(c.NPCHP), id}, func(ct pgconn.CommandTag, err error) error {
			if err != nil {
				return fmt.Errorf("update config: %w", err)
			}
			if ct.RowsAffected() == 0 {
				return tableNotFound(id)
			}
			return nil
		})
	}
	for i := range kinds {
		var old map[string][]any
		if prev != nil {
			old = prev.rows[i]
		}
		what := kinds[i].table
		for key, vals := range cur[i] {
			if o, ok := old[key]; ok && slices.Equal(o, vals) {
				continue
			}
			t.exec(upsertSQL[i], append([]any{id}, vals...), wrapErr("write "+what+" "+key))
		}
		stale := prev == nil
		for key := range old {
			if _, ok := cur[i][key]; !ok {
				stale = true
				break
			}
		}
		if stale {
			keep := make([]string, 0, len(cur[i]))
			for key := range cur[i] {
				keep = append(keep, key)
			}
			t.exec(deleteSQL[i], []any{id, keep}, wrapErr("delete stale "+what))
		}
	}
	if prev == nil {
		writeTrade(t, id, st)
	}
	t.exec(qUpsertGameState, []any{id, enc.game, enc.rng, st.World.Start, now}, wrapErr("write game state"))
	return &rowCache{config: st.Config, rows: cur}
}

// loadState reads the state of table tb (Config from tb, Catalogue not
// set, Party ordered by seat).
func loadState(ctx context.Context, tx pgx.Tx, tb engine.Table) (*engine.State, error) {
	st := &engine.State{Config: tb.Config}
	var game, rng string
	err := tx.QueryRow(ctx, "SELECT game, rng, world_start FROM game_state WHERE table_id = $1", tb.ID).Scan(&game, &rng, &st.World.Start)
	if err != nil {
		return nil, fmt.Errorf("read game state: %w", err)
	}
	if err := errors.Join(unjson(game, &st.Game, "game"), unjson(rng, &st.RNG, "rng")); err != nil {
		return nil, fmt.Errorf("read game state: %w", err)
	}
	w := &st.World
	st.Party = []*engine.Character{}
	w.Locations, w.NPCs, w.Templates = map[string]*engine.Location{}, map[string]*engine.NPC{}, map[string]*engine.ItemTemplate{}
	w.Items, w.Quests, w.Relationships = map[string]*engine.Item{}, map[string]*engine.Quest{}, map[string]int{}
	for i, k := range kinds {
		q := "SELECT " + strings.Join(k.cols, ", ") + " FROM " + k.table + " WHERE table_id = $1"
		err := each(ctx, tx, q, []any{tb.ID}, func(r pgx.Rows) error { return scanRow(i, r, st) })
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", k.table, err)
		}
	}
	if err := loadTrade(ctx, tx, tb.ID, st); err != nil {
		return nil, err
	}
	slices.SortStableFunc(st.Party, func(a, b *engine.Character) int {
		if c := seatCompare(a.Seat, b.Seat); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return st, nil
}

// scanRow reads one row of kind into st.
func scanRow(kind int, r pgx.Rows, st *engine.State) error {
	w := &st.World
	switch kind {
	case kindCharacters:
		var c engine.Character
		var stats, statuses string
		if err := r.Scan(&c.ID, &c.PlayerID, &c.Seat, &c.Name, &c.Class, &c.Backstory, &c.Level, &c.XP, &c.HP,
			&c.MaxHP, &c.Gold, &stats, &c.Weapon, &c.Armour, &c.Location, &statuses); err != nil {
			return err
		}
		st.Party = append(st.Party, &c)
		return errors.Join(unjson(stats, &c.Stats, "stats"), unjson(statuses, &c.Statuses, "statuses"))
	case kindLocations:
		var l engine.Location
		var exits string
		if err := r.Scan(&l.ID, &l.Name, &l.Description, &exits); err != nil {
			return err
		}
		w.Locations[l.ID] = &l
		return unjson(exits, &l.Exits, "exits")
	case kindNPCs:
		var n engine.NPC
		var lines, stats, statuses string
		if err := r.Scan(&n.ID, &n.Name, &n.Kind, &n.Location, &n.Hostile, &n.Behavior, &n.Disposition,
			&n.Faction, &n.Personality, &n.Tactics, &n.Secret, &lines, &n.Level, &n.HP, &n.MaxHP, &stats,
			&n.Weapon, &n.Armour, &n.Gold, &n.Hidden, &statuses); err != nil {
			return err
		}
		w.NPCs[n.ID] = &n
		return errors.Join(unjson(lines, &n.Lines, "lines"), unjson(stats, &n.Stats, "stats"), unjson(statuses, &n.Statuses, "statuses"))
	case kindTemplates:
		var t engine.ItemTemplate
		if err := r.Scan(&t.ID, &t.Name, &t.Category, &t.Description, &t.Value); err != nil {
			return err
		}
		w.Templates[t.ID] = &t
	case kindItems:
		var it engine.Item
		var buffs, flaws string
		if err := r.Scan(&it.ID, &it.Template, &it.Name, &it.OwnerType, &it.OwnerID, &buffs, &flaws); err != nil {
			return err
		}
		w.Items[it.ID] = &it
		return errors.Join(unjson(buffs, &it.Buffs, "buffs"), unjson(flaws, &it.Flaws, "flaws"))
	case kindQuests:
		var q engine.Quest
		if err := r.Scan(&q.ID, &q.Name, &q.Description, &q.Giver, &q.Status, &q.RewardXP, &q.RewardGold, &q.Requires); err != nil {
			return err
		}
		w.Quests[q.ID] = &q
	case kindRelationships:
		var a, b string
		var v int
		if err := r.Scan(&a, &b, &v); err != nil {
			return err
		}
		w.Relationships[a+"|"+b] = v
	}
	return nil
}

// seatCompare orders seats as engine.SeatLess does.
func seatCompare(a, b string) int {
	switch {
	case engine.SeatLess(a, b):
		return -1
	case engine.SeatLess(b, a):
		return 1
	}
	return 0
}
