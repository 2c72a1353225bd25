package agent

// The item tools of the narrative agent: items change hands (drop, give,
// transfer, buy) and new ones are made within the turn's limits.

import (
	"fmt"

	"tavern/internal/engine"
)

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

// drinkTool: a potion or a bandage works outside a fight too.
func drinkTool() *Tool {
	return defineTool("use_item", "The acting character uses a consumable it carries (a healing potion, a bandage) outside a fight. The engine rolls the healing; the item is used up.", []string{"item"},
		map[string]any{"item": str("The item instance id (from the inventory) or its exact name.")},
		func(tc *ToolContext, a struct{ Item string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				out, evs, err := tc.State.DrinkItem(tc.Dice, c.ID, a.Item)
				return map[string]any{"used": a.Item, "by": c.Name, "healed": out}, evs, err
			})
		})
}

// equipTool: wield a weapon or wear armour the character carries (an
// heirloom, loot).
func equipTool() *Tool {
	return defineTool("equip_item", "The acting character equips a weapon or armour it carries (by instance id or name): the rules use it from now on.", []string{"item"},
		map[string]any{"item": str("Instance id or exact name of a weapon or armour the acting character carries.")},
		func(tc *ToolContext, a struct{ Item string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				slot, it, evs, err := tc.State.Equip(c.ID, a.Item)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"equipped": it.Name, "slot": slot, "by": c.Name}, evs, nil
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
	return defineTool("buy_item", "The acting character buys an item (instance id) from an NPC here at its shop price (else its catalogue price); the engine checks and moves the gold and the item.", []string{"item", "from"},
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

// sellTool: the acting character sells an item to a shopkeeper here, at
// the shop's stated fraction of its price.
func sellTool() *Tool {
	return defineTool("sell_item", "The acting character sells an item it carries (instance id) to a shopkeeper here, who pays the shop's stated percentage of its price (get_npc_inventory shows it); the engine checks the keeper's gold and what the shop buys.", []string{"item", "to"},
		map[string]any{"item": str("Instance id of an item the acting character carries."), "to": str("The buyer (NPC id or name).")},
		func(tc *ToolContext, a struct{ Item, To string }) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, price, evs, err := tc.State.SellItem(c.ID, a.Item, a.To)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"sold": it.Name, "price": price, "gold_left": c.Gold, "to": tc.State.ResolveName(it)}, evs, nil
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
