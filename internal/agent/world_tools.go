package agent

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
			return map[string]any{"npc": n.Name, "alive": n.Alive(), "gold": n.Gold, "items": itemsView(tc.State, tc.State.World.ItemsOwned(engine.OwnerNPC, n.ID))}, nil
		})
}

func dropTool() *Tool {
	return defineTool("drop_item", "The acting character drops one of its items here (by instance id).", []string{"item"},
		map[string]any{"item": str("Instance id of an item the acting character carries.")},
		func(tc *ToolContext, a struct{ Item string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, evs, err := tc.State.DropItem(c.ID, a.Item)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"dropped": it.Name, "by": c.Name}, evs, nil
			})
		})
}

func giveTool() *Tool {
	return defineTool("give_item", "The acting character gives one of its items (by instance id) to a party member or an NPC here.", []string{"item", "to"},
		map[string]any{"item": str("Instance id of an item the acting character carries."), "to": str("Party member or NPC (id or name).")},
		func(tc *ToolContext, a struct{ Item, To string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, evs, err := tc.State.GiveItem(c.ID, a.Item, a.To)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"given": it.Name, "by": c.Name, "to": tc.State.ResolveName(it)}, evs, nil
			})
		})
}

func transferTool() *Tool {
	return defineTool("transfer_item", "Move an item (by instance id) to a new owner as the story demands: an NPC hands something over, loot from a body, an NPC picks something up. Never takes an item from another player's character.", []string{"item", "new_owner_type", "new_owner"},
		map[string]any{"item": str("Item instance id."), "new_owner_type": strEnum("Kind of new owner.", engine.OwnerCharacter, engine.OwnerNPC, engine.OwnerLocation), "new_owner": str("Id or name of the new owner.")},
		func(tc *ToolContext, a struct {
			Item         string `json:"item"`
			NewOwnerType string `json:"new_owner_type"`
			NewOwner     string `json:"new_owner"`
		}) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, evs, err := tc.State.TransferItem(c.ID, a.Item, a.NewOwnerType, a.NewOwner)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"item": it.Name, "instance_id": it.ID, "now_with": tc.State.ResolveName(it)}, evs, nil
			})
		})
}

func buyTool() *Tool {
	return defineTool("buy_item", "The acting character buys an item (instance id) from an NPC here at its catalogue price; the engine moves the gold and the item.", []string{"item", "from"},
		map[string]any{"item": str("Instance id from get_npc_inventory."), "from": str("The seller (NPC id or name).")},
		func(tc *ToolContext, a struct{ Item, From string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, price, evs, err := tc.State.BuyItem(c.ID, a.Item, a.From)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"bought": it.Name, "instance_id": it.ID, "price": price, "gold_left": c.Gold}, evs, nil
			})
		})
}

func (tc *ToolContext) createItem(limit int, template, name, ownerType, ownerID string, buffs, flaws []string) (any, error) {
	it, err := creating(tc, "item", limit, func() (*engine.Item, error) {
		it, evs, err := tc.State.CreateItem(tc.newID("item"), template, name, ownerType, ownerID, buffs, flaws)
		tc.emit(evs...)
		return it, err
	})
	if err != nil {
		return nil, err
	}
	return itemView(tc.State, it), nil
}

type createItemArgs struct {
	Template  string   `json:"template"`
	Name      string   `json:"name"`
	Buffs     []string `json:"buffs"`
	Flaws     []string `json:"flaws"`
	Character string   `json:"character"`
	NPC       string   `json:"npc"`
	Location  string   `json:"location"`
}

func itemProps(extra string, extraDesc string) map[string]any {
	p := map[string]any{
		"template": str("Template id (search with list_item_templates)."),
		"name":     str("Optional unique name (e.g. \"Father's longsword\")."),
		"buffs":    strList("Optional: up to 3 short buffs (e.g. \"heirloom: +1 morale\")."),
		"flaws":    strList("Optional: up to 3 short flaws (e.g. \"nicked edge\")."),
	}
	if extra != "" {
		p[extra] = str(extraDesc)
	}
	return p
}

func createForPlayerTool(lim Limits) *Tool {
	return defineTool("create_item_for_player", fmt.Sprintf("Create a NEW item for a party member (default: the acting character): quest rewards, backstory heirlooms. At most %d new items a turn.", lim.Items), []string{"template"},
		itemProps("character", "Optional party member (default: the acting character)."),
		func(tc *ToolContext, a createItemArgs) (any, error) {
			c, err := characterOrActor(tc, a.Character)
			if err != nil {
				return nil, err
			}
			return tc.createItem(lim.Items, a.Template, a.Name, engine.OwnerCharacter, c.ID, a.Buffs, a.Flaws)
		})
}

func createForNPCTool(lim Limits) *Tool {
	return defineTool("create_item_for_npc", fmt.Sprintf("Create a NEW item for an NPC (a merchant's stock, a guard's key). At most %d new items a turn.", lim.Items), []string{"template", "npc"},
		itemProps("npc", "NPC id or name."),
		func(tc *ToolContext, a createItemArgs) (any, error) {
			n := tc.State.World.FindNPC(a.NPC, tc.State.Game.Location)
			if n == nil {
				return nil, engine.Errorf(engine.ENOTFOUND, "No NPC %q.", a.NPC)
			}
			return tc.createItem(lim.Items, a.Template, a.Name, engine.OwnerNPC, n.ID, a.Buffs, a.Flaws)
		})
}

func spawnItemTool(lim Limits) *Tool {
	return defineTool("spawn_item_at_location", fmt.Sprintf("Create a NEW item lying at a location (default: here). At most %d new items a turn.", lim.Items), []string{"template"},
		itemProps("location", "Optional location id or name."),
		func(tc *ToolContext, a createItemArgs) (any, error) {
			l, err := locOrHere(tc, a.Location)
			if err != nil {
				return nil, err
			}
			return tc.createItem(lim.Items, a.Template, a.Name, engine.OwnerLocation, l.ID, a.Buffs, a.Flaws)
		})
}

func playerHealthTool() *Tool {
	return defineTool("update_player_health", "Damage or heal the acting character outside a fight (a fall, a rest, a poultice). You name the dice (at most 4d12+10); the engine rolls.", []string{"dice", "kind", "reason"},
		map[string]any{"dice": str("Dice notation, e.g. 1d6."), "kind": strEnum("damage or heal.", "damage", "heal"), "reason": str("What causes it.")},
		func(tc *ToolContext, a struct{ Dice, Kind, Reason string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				hp, maxHP, evs, err := tc.State.HealthChange(tc.Dice, c.ID, a.Dice, a.Kind, a.Reason)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"character": c.Name, "hp": hp, "max_hp": maxHP}, evs, nil
			})
		})
}

func playerGoldTool(lim Limits) *Tool {
	return defineTool("update_player_gold", fmt.Sprintf("Add or remove gold from the acting character for what the story earns or costs (a bribe, a found purse): at most ±%d a turn. Trade with buy_item; quests pay their own rewards.", lim.Gold), []string{"amount", "reason"},
		map[string]any{"amount": map[string]any{"type": "integer", "description": "Gold to add (negative to remove)."}, "reason": str("Why.")},
		func(tc *ToolContext, a struct {
			Amount int    `json:"amount"`
			Reason string `json:"reason"`
		}) (any, error) {
			c, err := actor(tc)
			if err != nil {
				return nil, err
			}
			if a.Amount > 0 && tc.gold+a.Amount > lim.Gold {
				return nil, errf("A turn grants at most %d gold (already %d this turn).", lim.Gold, tc.gold)
			}
			gold, err := tc.State.AdjustGold(c.ID, a.Amount)
			if err != nil {
				return nil, err
			}
			if a.Amount > 0 {
				tc.gold += a.Amount
			}
			tc.emit(engine.Event{Kind: "world", Data: map[string]any{"gold": map[string]any{"character_id": c.ID, "change": a.Amount, "gold": gold, "reason": a.Reason}}})
			return map[string]any{"character": c.Name, "gold": gold}, nil
		})
}

func playerXPTool(lim Limits) *Tool {
	return defineTool("update_player_experience", fmt.Sprintf("Grant the acting character XP for clever play or a milestone: at most %d a turn (fights and quests pay their own XP). Levels up automatically.", lim.XP), []string{"amount", "reason"},
		map[string]any{"amount": map[string]any{"type": "integer", "minimum": 1, "maximum": lim.XP}, "reason": str("Why.")},
		func(tc *ToolContext, a struct {
			Amount int    `json:"amount"`
			Reason string `json:"reason"`
		}) (any, error) {
			c, err := actor(tc)
			if err != nil {
				return nil, err
			}
			if a.Amount < 1 || tc.xp+a.Amount > lim.XP {
				return nil, errf("A turn grants 1 to %d XP (already %d this turn).", lim.XP, tc.xp)
			}
			tc.xp += a.Amount
			up := tc.State.GainXP(c, a.Amount)
			tc.emit(engine.Event{Kind: "world", Data: map[string]any{"xp": map[string]any{"character_id": c.ID, "gain": a.Amount, "xp": c.XP, "level": c.Level}}})
			return map[string]any{"character": c.Name, "xp": c.XP, "level": c.Level, "levelled_up": up}, nil
		})
}

func moveNPCTool() *Tool {
	return defineTool("move_npc", "Move an NPC to the party's location or a place next to it (an NPC follows, leaves, arrives). Set behavior \"following\" to have it travel with the party.", []string{"npc", "to"},
		map[string]any{"npc": str("NPC id or name."), "to": str("Location id or name.")},
		func(tc *ToolContext, a struct{ NPC, To string }) (any, error) {
			n, evs, err := tc.State.MoveNPC(a.NPC, a.To)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return map[string]any{"npc": n.Name, "location": n.Location}, nil
		})
}

func npcHealthTool() *Tool {
	return defineTool("update_npc_health", "Damage or heal an NPC outside a fight. You name the dice (at most 4d12+10); the engine rolls.", []string{"npc", "dice", "kind"},
		map[string]any{"npc": str("NPC id or name."), "dice": str("Dice notation."), "kind": strEnum("damage or heal.", "damage", "heal"), "reason": str("What causes it.")},
		func(tc *ToolContext, a struct{ NPC, Dice, Kind, Reason string }) (any, error) {
			n := tc.State.World.FindNPC(a.NPC, tc.State.Game.Location)
			if n == nil {
				return nil, engine.Errorf(engine.ENOTFOUND, "No NPC %q.", a.NPC)
			}
			hp, maxHP, evs, err := tc.State.HealthChange(tc.Dice, n.ID, a.Dice, a.Kind, a.Reason)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return map[string]any{"npc": n.Name, "hp": hp, "max_hp": maxHP}, nil
		})
}

func behaviorTool() *Tool {
	return defineTool("update_npc_behavior", "Set an NPC's behaviour: "+strings.Join(engine.Behaviors, ", ")+". Hostile or aggressive NPCs fight the party.", []string{"npc", "behavior"},
		map[string]any{"npc": str("NPC id or name."), "behavior": strEnum("The behaviour.", engine.Behaviors...)},
		func(tc *ToolContext, a struct{ NPC, Behavior string }) (any, error) {
			n, err := tc.State.SetBehavior(a.NPC, a.Behavior)
			if err != nil {
				return nil, err
			}
			tc.emit(engine.Event{Kind: "world", Data: map[string]any{"npc": n.Name, "behavior": n.Behavior}})
			return map[string]any{"npc": n.Name, "behavior": n.Behavior, "hostile": n.Hostile}, nil
		})
}

func dispositionTool() *Tool {
	return defineTool("update_npc_disposition", "Shift an NPC's general attitude by delta (at most ±20).", []string{"npc", "delta"},
		map[string]any{"npc": str("NPC id or name."), "delta": map[string]any{"type": "integer", "minimum": -engine.MaxDisposition, "maximum": engine.MaxDisposition}},
		func(tc *ToolContext, a struct {
			NPC   string `json:"npc"`
			Delta int    `json:"delta"`
		}) (any, error) {
			n, err := tc.State.AdjustDisposition(a.NPC, a.Delta)
			if err != nil {
				return nil, err
			}
			return map[string]any{"npc": n.Name, "disposition": n.Disposition}, nil
		})
}

func createNPCTool(lim Limits) *Tool {
	return defineTool("create_npc", fmt.Sprintf("Create an NPC (level 1-3) at a location (default: here). At most %d a turn.", lim.NPCs), []string{"name", "kind", "personality"},
		map[string]any{"name": str("Name."), "kind": str("What it is (merchant, sister, cave spider…)."), "location": str("Optional location id or name."),
			"personality": str("A few words of personality."), "hostile": map[string]any{"type": "boolean"}, "behavior": strEnum("Optional behaviour.", engine.Behaviors...),
			"level": map[string]any{"type": "integer", "minimum": 1, "maximum": 3}, "weapon": str("Optional catalogue weapon id.")},
		func(tc *ToolContext, a struct {
			Name, Kind, Location, Personality, Behavior, Weapon string
			Hostile                                             bool
			Level                                               int
		}) (any, error) {
			n, err := creating(tc, "npc", lim.NPCs, func() (*engine.NPC, error) {
				n, evs, err := tc.State.CreateNPC(tc.newID("npc"), engine.NewNPCSpec{Name: a.Name, Kind: a.Kind, Location: a.Location,
					Personality: a.Personality, Behavior: a.Behavior, Weapon: a.Weapon, Hostile: a.Hostile, Level: a.Level})
				tc.emit(evs...)
				return n, err
			})
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": n.ID, "name": n.Name, "location": n.Location, "hostile": n.Hostile, "hp": n.HP}, nil
		})
}

func updateRelationshipTool() *Tool {
	return defineTool("update_relationship", "Change how two beings feel about each other by delta (at most ±30); a defaults to the acting character.", []string{"b", "delta"},
		map[string]any{"a": str("Optional: a character or NPC (default: the acting character)."), "b": str("Another character or NPC."),
			"delta": map[string]any{"type": "integer", "minimum": -engine.MaxRelationship, "maximum": engine.MaxRelationship}},
		func(tc *ToolContext, a struct {
			A     string `json:"a"`
			B     string `json:"b"`
			Delta int    `json:"delta"`
		}) (any, error) {
			ida, _, err := beingOrActor(tc, a.A)
			if err != nil {
				return nil, err
			}
			v, evs, err := tc.State.AdjustRelationship(ida, a.B, a.Delta)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return map[string]any{"value": v}, nil
		})
}

func createQuestTool(lim Limits) *Tool {
	return defineTool("create_quest", fmt.Sprintf("Record a quest an NPC offers. Rewards at most 300 XP and 150 gold; optionally an item template the giver must receive. At most %d a turn.", lim.Quests), []string{"giver", "name", "description"},
		map[string]any{"giver": str("NPC id or name."), "name": str("Quest name."), "description": str("What must be done."),
			"reward_xp": map[string]any{"type": "integer", "minimum": 0, "maximum": engine.MaxQuestXP}, "reward_gold": map[string]any{"type": "integer", "minimum": 0, "maximum": engine.MaxQuestGold},
			"requires": str("Optional item template id the giver must be given.")},
		func(tc *ToolContext, a struct {
			Giver       string `json:"giver"`
			Name        string `json:"name"`
			Description string `json:"description"`
			RewardXP    int    `json:"reward_xp"`
			RewardGold  int    `json:"reward_gold"`
			Requires    string `json:"requires"`
		}) (any, error) {
			return creating(tc, "quest", lim.Quests, func() (*engine.Quest, error) {
				q, evs, err := tc.State.CreateQuest(tc.newID("quest"), a.Giver, a.Name, a.Description, a.RewardXP, a.RewardGold, a.Requires)
				tc.emit(evs...)
				return q, err
			})
		})
}

func questStatusTool() *Tool {
	return defineTool("update_quest_status", "Move a quest on: active (accepted), completed (the engine checks the required item is with the giver and pays the rewards), failed.", []string{"quest", "status"},
		map[string]any{"quest": str("Quest id or name."), "status": strEnum("New status.", engine.QuestActive, engine.QuestCompleted, engine.QuestFailed)},
		func(tc *ToolContext, a struct{ Quest, Status string }) (any, error) {
			res, evs, err := tc.State.SetQuestStatus(a.Quest, a.Status)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			return res, nil
		})
}

func createLocationTool(lim Limits) *Tool {
	return defineTool("create_location", fmt.Sprintf("Create a new place reachable from where the party is (and back). At most %d a turn; check list_all_locations first.", lim.Locations), []string{"name", "description"},
		map[string]any{"name": str("Name."), "description": str("What it looks like."), "exit_name": str("Optional name of the way there.")},
		func(tc *ToolContext, a struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			ExitName    string `json:"exit_name"`
		}) (any, error) {
			l, err := creating(tc, "location", lim.Locations, func() (*engine.Location, error) {
				l, evs, err := tc.State.CreateLocation(a.Name, a.Description, a.ExitName)
				tc.emit(evs...)
				return l, err
			})
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": l.ID, "name": l.Name}, nil
		})
}

func createTemplateTool(lim Limits) *Tool {
	return defineTool("create_item_template", fmt.Sprintf("Define a new kind of item (worth 0-100 gold) when list_item_templates has nothing fitting. At most %d a turn.", lim.Templates), []string{"name", "category", "description"},
		map[string]any{"name": str("Name."), "category": str("weapon, armour, consumable, quest, gear, trinket…"), "description": str("What it is."),
			"value": map[string]any{"type": "integer", "minimum": 0, "maximum": 100}},
		func(tc *ToolContext, a struct {
			Name        string `json:"name"`
			Category    string `json:"category"`
			Description string `json:"description"`
			Value       int    `json:"value"`
		}) (any, error) {
			return creating(tc, "template", lim.Templates, func() (*engine.ItemTemplate, error) {
				return tc.State.CreateTemplate(a.Name, a.Category, a.Description, a.Value)
			})
		})
}

func skillCheckTool() *Tool {
	return defineTool("skill_check", "The acting character attempts something uncertain: the engine rolls a check of one stat against a difficulty (d100: 1-100, d20: DC 1-30).", []string{"stat", "difficulty"},
		map[string]any{"stat": strEnum("The stat.", "str", "agi", "con", "int", "wis", "cha"), "difficulty": map[string]any{"type": "integer"}},
		func(tc *ToolContext, a struct {
			Stat       string `json:"stat"`
			Difficulty int    `json:"difficulty"`
		}) (any, error) {
			c, err := actor(tc)
			if err != nil {
				return nil, err
			}
			ok, r, err := tc.State.SkillCheck(tc.Dice, c.ID, a.Stat, a.Difficulty)
			if err != nil {
				return nil, err
			}
			tc.emit(engine.DiceEvents(tc.Dice)...)
			return map[string]any{"success": ok, "roll": r.Total, "difficulty": a.Difficulty}, nil
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
