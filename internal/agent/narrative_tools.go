package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"tavern/internal/engine"
)

type noArgs struct{}

func actor(tc *ToolContext) (*engine.Character, error) {
	if tc.Turn.Actor == nil {
		return nil, errf("No player acts this turn.")
	}
	c := tc.State.Character(tc.Turn.Actor.ID)
	if c == nil {
		return nil, errf("The acting character has left the table.")
	}
	return c, nil
}

var lookTool = &Tool{
	Name:        "look",
	Description: "Describe where the party is: the location, its exits (with the location id each leads to), the NPCs and the items lying there.",
	Parameters:  object(nil, map[string]any{}),
	Run: func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a noArgs
		if err := decode(&Tool{Name: "look"}, args, &a); err != nil {
			return "", err
		}
		return toolResult(locationOf(tc.State)), nil
	},
}

var moveTool = &Tool{
	Name:        "move_party",
	Description: "Move the whole party through an exit of the current location. The party travels together.",
	Parameters:  object([]string{"to"}, map[string]any{"to": str("The id of the location to go to (one of the current exits), or the exit's name.")}),
}

var npcInfoTool = &Tool{
	Name:        "get_npc_info",
	Description: "Get an NPC's details: kind, personality, faction, behaviour, disposition, what they might say, their secret (for you only) and health.",
	Parameters:  object([]string{"npc"}, map[string]any{"npc": str("The NPC's id or name.")}),
}

var playerInfoTool = &Tool{
	Name:        "get_player_info",
	Description: "Get the acting character's sheet and inventory (with item instance ids), or another party member's by name.",
	Parameters:  object(nil, map[string]any{"character": str("Optional: a party member's name or id; defaults to the acting character.")}),
}

var pickupTool = &Tool{
	Name:        "pickup_item",
	Description: "The acting character picks up an item lying at the party's location. Use the item's instance id from look.",
	Parameters:  object([]string{"item"}, map[string]any{"item": str("The item instance id (or exact name) of an item lying here.")}),
}

var respondTool = &Tool{
	Name:        "respond",
	Description: "OUTPUT: end the turn with narration for the players (and optional hints of what they could do next).",
	Parameters: object([]string{"narration"}, map[string]any{
		"narration": str("What happens, in second or third person, vivid and concise."),
		"hints":     strList("Optional short suggestions of next actions."),
	}),
	Output: true,
}

var startCombatTool = &Tool{
	Name:        "start_combat",
	Description: "OUTPUT: end the turn by starting a fight at the party's location. The engine adds every hostile NPC present, rolls initiative and switches to combat.",
	Parameters: object([]string{"narration", "foes"}, map[string]any{
		"narration": str("How the fight breaks out."),
		"foes":      strList("Ids of the NPCs the party fights (NPCs at the current location)."),
	}),
	Output: true,
}

func init() {
	moveTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			To string `json:"to"`
		}
		if err := decode(moveTool, args, &a); err != nil {
			return "", err
		}
		_, evs, err := tc.State.MoveParty(a.To)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		return toolResult(map[string]any{"moved": true, "location": locationOf(tc.State)}), nil
	}
	npcInfoTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			NPC string `json:"npc"`
		}
		if err := decode(npcInfoTool, args, &a); err != nil {
			return "", err
		}
		n := tc.State.World.FindNPC(a.NPC, tc.State.Game.Location)
		if n == nil {
			var names []string
			for _, x := range tc.State.World.NPCsAt(tc.State.Game.Location) {
				names = append(names, fmt.Sprintf("%s (%s)", x.Name, x.ID))
			}
			return "", engine.Errorf(engine.ENOTFOUND, "No NPC %q; NPCs here: %s.", a.NPC, fmtList(names))
		}
		var quests []map[string]any
		for _, q := range tc.State.World.Quests {
			if q.Giver == n.ID {
				quests = append(quests, map[string]any{"id": q.ID, "name": q.Name, "description": q.Description, "status": q.Status})
			}
		}
		return toolResult(map[string]any{
			"id": n.ID, "name": n.Name, "kind": n.Kind, "location": n.Location, "here": n.Location == tc.State.Game.Location,
			"hostile": n.Hostile, "behavior": n.Behavior, "disposition": n.Disposition, "faction": n.Faction,
			"personality": n.Personality, "secret": n.Secret, "lines": n.Lines, "hp": n.HP, "max_hp": n.MaxHP,
			"statuses": n.Statuses, "quests": quests,
		}), nil
	}
	playerInfoTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Character string `json:"character"`
		}
		if err := decode(playerInfoTool, args, &a); err != nil {
			return "", err
		}
		c, err := actor(tc)
		if a.Character != "" {
			c = tc.State.FindCharacter(a.Character)
			if c == nil {
				return "", engine.Errorf(engine.ENOTFOUND, "No party member %q.", a.Character)
			}
		} else if err != nil {
			return "", err
		}
		var items []itemRef
		for _, it := range tc.State.Inventory(c.ID) {
			items = append(items, itemRef{ID: it.ID, Name: it.Name})
		}
		return toolResult(map[string]any{
			"id": c.ID, "name": c.Name, "class": c.Class, "level": c.Level, "xp": c.XP, "hp": c.HP, "max_hp": c.MaxHP,
			"gold": c.Gold, "stats": c.Stats, "weapon": tc.State.Catalogue.Weapon(c.Weapon).Name,
			"armour": tc.State.Catalogue.Armour(c.Armour).Name, "statuses": c.Statuses, "inventory": items,
		}), nil
	}
	pickupTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Item string `json:"item"`
		}
		if err := decode(pickupTool, args, &a); err != nil {
			return "", err
		}
		c, err := actor(tc)
		if err != nil {
			return "", err
		}
		it, evs, err := tc.State.PickUp(c.ID, a.Item)
		if err != nil {
			return "", err
		}
		tc.emit(evs...)
		return toolResult(map[string]any{"picked_up": it.Name, "item_id": it.ID, "by": c.Name}), nil
	}
	respondTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Narration string   `json:"narration"`
			Hints     []string `json:"hints"`
		}
		if err := decode(respondTool, args, &a); err != nil {
			return "", err
		}
		if tc.State.Game.Mode != engine.ModeNarrative {
			return "", errf("A fight is under way: end the turn with continue_combat or end_combat.")
		}
		tc.Output = &Output{Tool: respondTool.Name, Narration: strings.TrimSpace(a.Narration), Hints: a.Hints}
		tc.emit(narrationEvent(engine.AgentNarrative, tc.Output))
		markResultSeen(tc)
		return "Turn ended.", nil
	}
	startCombatTool.Run = func(tc *ToolContext, args json.RawMessage) (string, error) {
		var a struct {
			Narration string   `json:"narration"`
			Foes      []string `json:"foes"`
		}
		if err := decode(startCombatTool, args, &a); err != nil {
			return "", err
		}
		if len(a.Foes) == 0 {
			return "", errf("start_combat needs at least one foe id.")
		}
		out := &Output{Tool: startCombatTool.Name, Narration: strings.TrimSpace(a.Narration)}
		cb, evs, err := tc.State.StartCombat(tc.Dice, a.Foes)
		if err != nil {
			return "", err
		}
		tc.Output = out
		tc.emit(narrationEvent(engine.AgentNarrative, out))
		markResultSeen(tc)
		var init []map[string]any
		for _, e := range cb.Order {
			m := map[string]any{"id": e.Entry, "name": e.Name, "kind": e.Kind}
			if e.Kind != engine.KindBookend {
				m["initiative"] = e.Initiative
			}
			init = append(init, m)
		}
		// Dice first, then combat_started, then the mode change.
		var mode []engine.Event
		for _, e := range evs {
			if e.Kind == "mode" {
				mode = append(mode, e)
			} else {
				tc.emit(e)
			}
		}
		tc.emit(engine.Event{Kind: "combat_started", Data: map[string]any{"combat_id": cb.ID, "location": cb.Location, "initiative": init}})
		tc.emit(mode...)
		return toolResult(map[string]any{"combat_id": cb.ID, "initiative": init}), nil
	}
}

func markResultSeen(tc *ToolContext) {
	if tc.State.Game.LastCombatResult != nil {
		tc.State.Game.ResultSeen = true
	}
}

func narrationEvent(agentName string, o *Output) engine.Event {
	d := map[string]any{"agent": agentName, "text": o.Narration}
	if len(o.Hints) > 0 {
		d["hints"] = o.Hints
	}
	return engine.Event{Kind: "narration", Data: d}
}

// NarrativeTools is the narrative agent's tool set.
func NarrativeTools() *Registry {
	return NewRegistry(lookTool, locationInfoTool, moveTool, npcInfoTool, npcsAtTool, playerInfoTool, relationshipTool, questsTool,
		allLocationsTool, templatesTool, itemsAtTool, inventoryTool, npcInventoryTool,
		pickupTool, dropTool, giveTool, transferTool, buyTool,
		createForPlayerTool, createForNPCTool, spawnItemTool,
		playerHealthTool, playerGoldTool, playerXPTool,
		moveNPCTool, npcHealthTool, behaviorTool, dispositionTool, createNPCTool,
		updateRelationshipTool, createQuestTool, questStatusTool, createLocationTool, createTemplateTool, skillCheckTool,
		respondTool, startCombatTool)
}
