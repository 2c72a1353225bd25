package agent

// The world tools of the narrative agent: queries of the world (seed 001),
// the limits of a turn, and the helpers the item and story tools share.

import (
	"fmt"
	"sort"
	"strings"

	"tavern/internal/engine"
)

// Limits bound what one turn's tools may create or hand out, so no single
// turn (or prompt injection) floods the world. A zero field takes its
// value from DefaultLimits.
type Limits struct {
	// Items, NPCs, Locations, Templates and Quests are the most of each
	// kind one turn may create.
	Items, NPCs, Locations, Templates, Quests int
	// Gold and XP bound what update_player_gold and
	// update_player_experience grant over one turn.
	Gold, XP int
}

// MaxGoldPerTurn and MaxXPPerTurn are the default bounds of
// update_player_gold/experience over one turn.
const (
	MaxGoldPerTurn = engine.MaxGoldChange
	MaxXPPerTurn   = engine.MaxXPGrant
)

// DefaultLimits returns the limits a toolset has unless told otherwise.
func DefaultLimits() Limits {
	return Limits{Items: 3, NPCs: 2, Locations: 1, Templates: 2, Quests: 1, Gold: MaxGoldPerTurn, XP: MaxXPPerTurn}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.Items, d.Items}, {&l.NPCs, d.NPCs}, {&l.Locations, d.Locations}, {&l.Templates, d.Templates},
		{&l.Quests, d.Quests}, {&l.Gold, d.Gold}, {&l.XP, d.XP},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	return l
}

// creating runs make if this turn may still create a kind of thing (at
// most limit of them); a refused make does not count against the limit.
func creating[T any](tc *ToolContext, kind string, limit int, make func() (T, error)) (T, error) {
	var zero T
	if tc.created == nil {
		tc.created = map[string]int{}
	}
	if tc.created[kind] >= limit {
		return zero, errf("This turn has already created %d %s(s), the limit; continue next turn.", limit, kind)
	}
	v, err := make()
	if err == nil {
		tc.created[kind]++
	}
	return v, err
}

// newID makes an id for a created entity that is unique in the world and
// stable for the turn (turn number + a counter).
func (tc *ToolContext) newID(prefix string) string {
	tc.seq++
	return fmt.Sprintf("%s-t%d-%d", prefix, tc.Turn.No, tc.seq)
}

func itemView(st *engine.State, it *engine.Item) map[string]any {
	return map[string]any{"instance_id": it.ID, "template": it.Template, "name": it.Name, "buffs": it.Buffs, "flaws": it.Flaws, "price": st.Price(it)}
}

func itemsView(st *engine.State, items []*engine.Item) []map[string]any {
	out := []map[string]any{}
	for _, it := range items {
		out = append(out, itemView(st, it))
	}
	return out
}

type targetArgs struct {
	Location string `json:"location"`
}

func locOrHere(tc *ToolContext, ref string) (*engine.Location, error) {
	if ref == "" {
		ref = tc.State.Game.Location
	}
	l := tc.State.FindLocation(ref)
	if l == nil {
		return nil, engine.Errorf(engine.ENOTFOUND, "No location %q; list them with list_all_locations.", ref)
	}
	return l, nil
}

func locationInfoTool() *Tool {
	return defineTool("get_location_info", "Details of a location (default: where the party is): description, exits, NPCs, items lying there.", nil,
		map[string]any{"location": str("Optional location id or name.")},
		func(tc *ToolContext, a targetArgs) (any, error) {
			l, err := locOrHere(tc, a.Location)
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": l.ID, "name": l.Name, "description": l.Description, "exits": l.Exits,
				"npcs": npcBriefs(tc.State, l.ID), "items": itemsView(tc.State, tc.State.World.ItemsOwned(engine.OwnerLocation, l.ID)),
				"party_here": l.ID == tc.State.Game.Location}, nil
		})
}

func npcsAtTool() *Tool {
	return defineTool("get_npcs_at_location", "The NPCs at a location (default: where the party is), with their relationship to the acting character.", nil,
		map[string]any{"location": str("Optional location id or name.")},
		func(tc *ToolContext, a targetArgs) (any, error) {
			l, err := locOrHere(tc, a.Location)
			if err != nil {
				return nil, err
			}
			out := []map[string]any{}
			for _, n := range tc.State.World.NPCsAt(l.ID) {
				m := map[string]any{"id": n.ID, "name": n.Name, "kind": n.Kind, "behavior": n.Behavior, "disposition": n.Disposition, "hostile": n.Hostile, "alive": n.Alive()}
				if tc.Turn.Actor != nil {
					m["relationship"] = tc.State.Relationship(tc.Turn.Actor.ID, n.ID)
				}
				out = append(out, m)
			}
			return out, nil
		})
}

func relationshipTool() *Tool {
	return defineTool("get_relationship", "How two beings (characters or NPCs, by id or name) feel about each other, -100..100. a defaults to the acting character.", []string{"b"},
		map[string]any{"a": str("Optional: first character or NPC (default: the acting character)."), "b": str("Second character or NPC.")},
		func(tc *ToolContext, a struct{ A, B string }) (any, error) {
			ida, na, err := beingOrActor(tc, a.A)
			if err != nil {
				return nil, err
			}
			idb, nb, ok := tc.State.ResolveBeing(a.B)
			if !ok {
				return nil, engine.Errorf(engine.ENOTFOUND, "No character or NPC %q.", a.B)
			}
			return map[string]any{"a": na, "b": nb, "value": tc.State.Relationship(ida, idb)}, nil
		})
}

func questsTool() *Tool {
	return defineTool("get_player_quests", "Every quest of the table: giver, status (offered, active, completed, failed), rewards, required item.", nil, map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) { return questList(tc.State), nil })
}

func allLocationsTool() *Tool {
	return defineTool("list_all_locations", "Every known location of the world (id and name).", nil, map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) {
			var out []ItemRef
			for _, l := range tc.State.World.Locations {
				out = append(out, ItemRef{ID: l.ID, Name: l.Name})
			}
			sortRefs(out)
			return out, nil
		})
}

func templatesTool() *Tool {
	return defineTool("list_item_templates", "Search item templates (kinds of items: catalogue equipment and the adventure's own) by name and/or category. Search before creating a template.", nil,
		map[string]any{"search": str("Optional text in the name."), "category": str("Optional: weapon, armour, consumable, quest, gear, trinket…")},
		func(tc *ToolContext, a struct{ Search, Category string }) (any, error) {
			return templates(tc.State, a.Search, a.Category), nil
		})
}

func itemsAtTool() *Tool {
	return defineTool("get_items_at_location", "Items lying at a location (default: here), with their instance ids.", nil,
		map[string]any{"location": str("Optional location id or name.")},
		func(tc *ToolContext, a targetArgs) (any, error) {
			l, err := locOrHere(tc, a.Location)
			if err != nil {
				return nil, err
			}
			return itemsView(tc.State, tc.State.World.ItemsOwned(engine.OwnerLocation, l.ID)), nil
		})
}

func inventoryTool() *Tool {
	return defineTool("get_player_inventory", "A party member's items with instance ids (default: the acting character).", nil,
		map[string]any{"character": str("Optional party member name or id.")},
		func(tc *ToolContext, a struct{ Character string }) (any, error) {
			c, err := characterOrActor(tc, a.Character)
			if err != nil {
				return nil, err
			}
			return map[string]any{"character": c.Name, "gold": c.Gold, "items": itemsView(tc.State, tc.State.Inventory(c.ID))}, nil
		})
}

func npcInventoryTool() *Tool {
	return defineTool("get_npc_inventory", "An NPC's items with instance ids and prices (what a merchant sells, what a body carries).", []string{"npc"},
		map[string]any{"npc": str("NPC id or name.")},
		func(tc *ToolContext, a struct{ NPC string }) (any, error) {
			n := tc.State.World.FindNPC(a.NPC, tc.State.Game.Location)
			if n == nil {
				return nil, engine.Errorf(engine.ENOTFOUND, "No NPC %q.", a.NPC)
			}
			items := itemsView(tc.State, tc.State.World.ItemsOwned(engine.OwnerNPC, n.ID))
			out := map[string]any{"npc": n.Name, "alive": n.Alive(), "gold": n.Gold, "items": items}
			if sh := tc.State.World.Shops[n.ID]; sh != nil {
				// A shop's own prices, and what it pays for what it buys.
				for i, it := range tc.State.World.ItemsOwned(engine.OwnerNPC, n.ID) {
					items[i]["price"] = tc.State.PriceFrom(n.ID, it)
				}
				out["shop"] = map[string]any{"name": sh.Name, "buys_at_percent": sh.BuysAt, "buys": sh.Buys}
			}
			return out, nil
		})
}

// asActor runs an operation of the acting character and emits its events.
func asActor(tc *ToolContext, do func(c *engine.Character) (any, []engine.Event, error)) (any, error) {
	c, err := actor(tc)
	if err != nil {
		return nil, err
	}
	out, evs, err := do(c)
	if err != nil {
		return nil, err
	}
	tc.emit(evs...)
	return out, nil
}

func beingOrActor(tc *ToolContext, ref string) (string, string, error) {
	if ref == "" {
		c, err := actor(tc)
		if err != nil {
			return "", "", err
		}
		return c.ID, c.Name, nil
	}
	id, name, ok := tc.State.ResolveBeing(ref)
	if !ok {
		return "", "", engine.Errorf(engine.ENOTFOUND, "No character or NPC %q.", ref)
	}
	return id, name, nil
}

func characterOrActor(tc *ToolContext, ref string) (*engine.Character, error) {
	if ref == "" {
		return actor(tc)
	}
	c := tc.State.FindCharacter(ref)
	if c == nil {
		return nil, engine.Errorf(engine.ENOTFOUND, "No party member %q.", ref)
	}
	return c, nil
}

func npcBriefs(st *engine.State, loc string) []NPCBrief {
	out := []NPCBrief{}
	for _, n := range st.World.NPCsAt(loc) {
		out = append(out, NPCBrief{ID: n.ID, Name: n.Name, Kind: n.Kind, Hostile: n.Hostile, Behavior: n.Behavior, Statuses: n.Statuses})
	}
	return out
}

func questList(st *engine.State) []map[string]any {
	out := []map[string]any{}
	ids := make([]string, 0, len(st.World.Quests))
	for id := range st.World.Quests {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		q := st.World.Quests[id]
		m := map[string]any{"id": q.ID, "name": q.Name, "description": q.Description, "giver": q.Giver, "status": q.Status,
			"reward_xp": q.RewardXP, "reward_gold": q.RewardGold}
		if q.Requires != "" {
			m["requires"] = q.Requires
			m["requires_name"] = st.ItemName(q.Requires)
		}
		out = append(out, m)
	}
	return out
}

func templates(st *engine.State, search, category string) []map[string]any {
	search, category = strings.ToLower(search), strings.ToLower(category)
	var out []map[string]any
	add := func(id, name, cat string, price int) {
		if (search == "" || strings.Contains(strings.ToLower(name), search) || strings.Contains(id, search)) && (category == "" || cat == category) {
			out = append(out, map[string]any{"template_id": id, "name": name, "category": cat, "price": price})
		}
	}
	for _, w := range st.Catalogue.Weapons {
		add(w.ID, w.Name, "weapon", w.Price)
	}
	for _, a := range st.Catalogue.Armours {
		add(a.ID, a.Name, "armour", a.Price)
	}
	for _, c := range st.Catalogue.Consumables {
		add(c.ID, c.Name, "consumable", c.Price)
	}
	ids := make([]string, 0, len(st.World.Templates))
	for id := range st.World.Templates {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := st.World.Templates[id]
		add(t.ID, t.Name, t.Category, t.Value)
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}
