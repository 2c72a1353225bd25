package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"tavern/internal/engine"
)

// The world's rows: one table per kind of entity, keyed by (table_id, id),
// each written by a write… step of writeState and read by a load… step of
// loadState (state.go).

// Columns of the world tables after (table_id, id), in the order the
// write steps bind them and the load steps scan them.
var (
	locationCols = []string{"name", "description", "exits"}
	npcCols      = []string{"name", "kind", "location", "hostile", "behavior", "disposition", "faction", "personality", "tactics", "secret", "lines", "level", "hp", "max_hp", "stats", "weapon", "armour", "gold", "hidden", "statuses"}
	templateCols = []string{"name", "category", "description", "value"}
	itemCols     = []string{"template", "name", "owner_type", "owner_id", "buffs", "flaws"}
	questCols    = []string{"name", "description", "giver", "status", "reward_xp", "reward_gold", "requires"}
)

var (
	qUpsertLocation  = upsertSQL("locations", locationCols)
	qDeleteLocations = deleteMissingSQL("locations", "id")
	qUpsertNPC       = upsertSQL("npcs", npcCols)
	qDeleteNPCs      = deleteMissingSQL("npcs", "id")
	qUpsertTemplate  = upsertSQL("item_templates", templateCols)
	qDeleteTemplates = deleteMissingSQL("item_templates", "id")
	qUpsertItem      = upsertSQL("items", itemCols)
	qDeleteItems     = deleteMissingSQL("items", "id")
	qUpsertQuest     = upsertSQL("quests", questCols)
	qDeleteQuests    = deleteMissingSQL("quests", "id")

	qUpsertRelationship = `INSERT INTO relationships (table_id, a, b, value) VALUES (?, ?, ?, ?)
ON CONFLICT (table_id, a, b) DO UPDATE SET value = excluded.value WHERE relationships.value IS NOT excluded.value`
	// a holds no "|" (the key is cut at the first one), so a||'|'||b is the key.
	qDeleteRelationships = deleteMissingSQL("relationships", "a || '|' || b")
)

func writeLocations(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	return writeRows(w, id, st.World.Locations, old.Locations, full, sameLocation, func(_ string, l *engine.Location) error {
		if _, err := w.exec(qUpsertLocation, id, l.ID, l.Name, l.Description, plainJSON(l.Exits)); err != nil {
			return fmt.Errorf("write location %s: %w", l.ID, err)
		}
		return nil
	}, qDeleteLocations, "locations")
}

func loadLocations(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.Locations = map[string]*engine.Location{}
	err := each(ctx, tx, selectSQL("locations", locationCols), []any{id}, func(r *sql.Rows) error {
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
		return fmt.Errorf("read locations: %w", err)
	}
	return nil
}

func writeNPCs(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	return writeRows(w, id, st.World.NPCs, old.NPCs, full, sameNPC, func(_ string, n *engine.NPC) error {
		if _, err := w.exec(qUpsertNPC, id, n.ID, n.Name, n.Kind, n.Location, n.Hostile, n.Behavior,
			n.Disposition, n.Faction, n.Personality, n.Tactics, n.Secret, plainJSON(n.Lines), n.Level,
			n.HP, n.MaxHP, plainJSON(n.Stats), n.Weapon, n.Armour, n.Gold, n.Hidden,
			plainJSON(n.Statuses)); err != nil {
			return fmt.Errorf("write npc %s: %w", n.ID, err)
		}
		return nil
	}, qDeleteNPCs, "npcs")
}

func loadNPCs(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.NPCs = map[string]*engine.NPC{}
	err := each(ctx, tx, selectSQL("npcs", npcCols), []any{id}, func(r *sql.Rows) error {
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
		return fmt.Errorf("read npcs: %w", err)
	}
	return nil
}

func writeTemplates(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	return writeRows(w, id, st.World.Templates, old.Templates, full, sameValue, func(_ string, t *engine.ItemTemplate) error {
		if _, err := w.exec(qUpsertTemplate, id, t.ID, t.Name, t.Category, t.Description, t.Value); err != nil {
			return fmt.Errorf("write item template %s: %w", t.ID, err)
		}
		return nil
	}, qDeleteTemplates, "item templates")
}

func loadTemplates(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.Templates = map[string]*engine.ItemTemplate{}
	err := each(ctx, tx, selectSQL("item_templates", templateCols), []any{id}, func(r *sql.Rows) error {
		var t engine.ItemTemplate
		if err := r.Scan(&t.ID, &t.Name, &t.Category, &t.Description, &t.Value); err != nil {
			return err
		}
		st.World.Templates[t.ID] = &t
		return nil
	})
	if err != nil {
		return fmt.Errorf("read item templates: %w", err)
	}
	return nil
}

func writeItems(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	return writeRows(w, id, st.World.Items, old.Items, full, sameItem, func(_ string, it *engine.Item) error {
		if _, err := w.exec(qUpsertItem, id, it.ID, it.Template, it.Name, it.OwnerType, it.OwnerID,
			plainJSON(it.Buffs), plainJSON(it.Flaws)); err != nil {
			return fmt.Errorf("write item %s: %w", it.ID, err)
		}
		return nil
	}, qDeleteItems, "items")
}

func loadItems(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.Items = map[string]*engine.Item{}
	err := each(ctx, tx, selectSQL("items", itemCols), []any{id}, func(r *sql.Rows) error {
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
		return fmt.Errorf("read items: %w", err)
	}
	return nil
}

func writeQuests(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	return writeRows(w, id, st.World.Quests, old.Quests, full, sameValue, func(_ string, q *engine.Quest) error {
		if _, err := w.exec(qUpsertQuest, id, q.ID, q.Name, q.Description, q.Giver, q.Status, q.RewardXP, q.RewardGold, q.Requires); err != nil {
			return fmt.Errorf("write quest %s: %w", q.ID, err)
		}
		return nil
	}, qDeleteQuests, "quests")
}

func loadQuests(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.Quests = map[string]*engine.Quest{}
	err := each(ctx, tx, selectSQL("quests", questCols), []any{id}, func(r *sql.Rows) error {
		var q engine.Quest
		if err := r.Scan(&q.ID, &q.Name, &q.Description, &q.Giver, &q.Status, &q.RewardXP, &q.RewardGold, &q.Requires); err != nil {
			return err
		}
		st.World.Quests[q.ID] = &q
		return nil
	})
	if err != nil {
		return fmt.Errorf("read quests: %w", err)
	}
	return nil
}

// writeRelationships stores each "a|b" key of the world's relationships as
// an (a, b) row; EINVALID for a key without "|".
func writeRelationships(w *writeTx, id string, st, prev *engine.State) error {
	old, full := worldOf(prev)
	same := func(a, b int) bool { return a == b }
	return writeRows(w, id, st.World.Relationships, old.Relationships, full, same, func(key string, v int) error {
		a, b, ok := strings.Cut(key, "|")
		if !ok {
			return engine.Errorf(engine.EINVALID, "relationship key %q is not \"a|b\"", key)
		}
		if _, err := w.exec(qUpsertRelationship, id, a, b, v); err != nil {
			return fmt.Errorf("write relationship %s: %w", key, err)
		}
		return nil
	}, qDeleteRelationships, "relationships")
}

func loadRelationships(ctx context.Context, tx *sql.Tx, id string, st *engine.State) error {
	st.World.Relationships = map[string]int{}
	err := each(ctx, tx, "SELECT a, b, value FROM relationships WHERE table_id = ?", []any{id}, func(r *sql.Rows) error {
		var a, b string
		var v int
		if err := r.Scan(&a, &b, &v); err != nil {
			return err
		}
		st.World.Relationships[a+"|"+b] = v
		return nil
	})
	if err != nil {
		return fmt.Errorf("read relationships: %w", err)
	}
	return nil
}
