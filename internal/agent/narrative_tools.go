package agent

import (
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

func lookTool() *Tool {
	return defineTool("look", "Describe where the party is: the location, its exits (with the location id each leads to), the NPCs and the items lying there.", nil,
		map[string]any{},
		func(tc *ToolContext, _ noArgs) (any, error) { return locationOf(tc.State), nil })
}

func moveTool() *Tool {
	return defineTool("move_party", "Move the whole party through an exit of the current location. The party travels together. A trap on the way springs on the acting character: the engine rolls its check and damage, and the result's trap says what happened; narrate it.", []string{"to"},
		map[string]any{"to": str("The id of the location to go to (one of the current exits), or the exit's name.")},
		func(tc *ToolContext, a struct {
			To string `json:"to"`
		}) (any, error) {
			leader := ""
			if tc.Turn.Actor != nil {
				leader = tc.Turn.Actor.ID
			}
			_, trap, evs, err := tc.State.MoveParty(tc.Dice, leader, a.To)
			if err != nil {
				return nil, err
			}
			tc.emit(evs...)
			out := map[string]any{"moved": true, "location": locationOf(tc.State)}
			if trap != nil {
				// The engine has rolled the trap; the DM only tells it.
				out["trap"] = trap
			}
			return out, nil
		})
}

func npcInfoTool() *Tool {
	return defineTool("get_npc_info", "Get an NPC's details: kind, personality, faction, behaviour, disposition, what they might say, their secret (for you only) and health.", []string{"npc"},
		map[string]any{"npc": str("The NPC's id or name.")},
		func(tc *ToolContext, a struct {
			NPC string `json:"npc"`
		}) (any, error) {
			n := tc.State.World.FindNPC(a.NPC, tc.State.Game.Location)
			if n == nil {
				var names []string
				for _, x := range tc.State.World.NPCsAt(tc.State.Game.Location) {
					names = append(names, fmt.Sprintf("%s (%s)", x.Name, x.ID))
				}
				return nil, engine.Errorf(engine.ENOTFOUND, "No NPC %q; NPCs here: %s.", a.NPC, fmtList(names))
			}
			var quests []map[string]any
			for _, q := range tc.State.World.Quests {
				if q.Giver == n.ID {
					quests = append(quests, map[string]any{"id": q.ID, "name": q.Name, "description": q.Description, "status": q.Status})
				}
			}
			return map[string]any{
				"id": n.ID, "name": n.Name, "kind": n.Kind, "location": n.Location, "here": n.Location == tc.State.Game.Location,
				"hostile": n.Hostile, "behavior": n.Behavior, "disposition": n.Disposition, "faction": n.Faction,
				"personality": n.Personality, "tactics": n.Tactics, "secret": n.Secret, "lines": n.Lines, "hp": n.HP, "max_hp": n.MaxHP,
				"statuses": n.Statuses, "quests": quests,
			}, nil
		})
}

func playerInfoTool() *Tool {
	return defineTool("get_player_info", "Get the acting character's sheet and inventory (with item instance ids), or another party member's by name.", nil,
		map[string]any{"character": str("Optional: a party member's name or id; defaults to the acting character.")},
		func(tc *ToolContext, a struct {
			Character string `json:"character"`
		}) (any, error) {
			c, err := characterOrActor(tc, a.Character)
			if err != nil {
				return nil, err
			}
			var items []ItemRef
			for _, it := range tc.State.Inventory(c.ID) {
				items = append(items, ItemRef{ID: it.ID, Name: it.Name})
			}
			return map[string]any{
				"id": c.ID, "name": c.Name, "class": c.Class, "level": c.Level, "xp": c.XP, "hp": c.HP, "max_hp": c.MaxHP,
				"gold": c.Gold, "stats": c.Stats, "weapon": tc.State.Catalogue.Weapon(c.Weapon).Name,
				"armour": tc.State.Catalogue.Armour(c.Armour).Name, "statuses": c.Statuses, "inventory": items,
			}, nil
		})
}

func pickupTool() *Tool {
	return defineTool("pickup_item", "The acting character picks up an item lying at the party's location. Use the item's instance id from look.", []string{"item"},
		map[string]any{"item": str("The item instance id (or exact name) of an item lying here.")},
		func(tc *ToolContext, a struct {
			Item string `json:"item"`
		}) (any, error) {
			return asActor(tc, func(c *engine.Character) (any, []engine.Event, error) {
				it, evs, err := tc.State.PickUp(c.ID, a.Item)
				if err != nil {
					return nil, nil, err
				}
				return map[string]any{"picked_up": it.Name, "item_id": it.ID, "by": c.Name}, evs, nil
			})
		})
}

func respondTool() *Tool {
	return defineOutput("respond", "OUTPUT: end the turn with narration for the players (and optional hints of what they could do next).", []string{"narration"},
		map[string]any{
			"narration": str("What happens, in second or third person, vivid and concise."),
			"hints":     strList("Optional short suggestions of next actions."),
		},
		func(tc *ToolContext, a struct {
			Narration string   `json:"narration"`
			Hints     []string `json:"hints"`
		}) (any, error) {
			if tc.State.Game.Mode != engine.ModeNarrative {
				return nil, errf("A fight is under way: end the turn with continue_combat or end_combat.")
			}
			tc.Output = &Output{Tool: "respond", Narration: strings.TrimSpace(a.Narration), Hints: a.Hints}
			tc.emit(narrationEvent(tc, engine.AgentNarrative, tc.Output))
			markResultSeen(tc)
			return "Turn ended.", nil
		})
}

func startCombatTool() *Tool {
	return defineOutput("start_combat", "OUTPUT: end the turn by starting a fight at the party's location. The engine adds every hostile NPC present, rolls initiative and switches to combat.", []string{"narration", "foes"},
		map[string]any{
			"narration": str("How the fight breaks out."),
			"foes":      strList("Ids of the NPCs the party fights (NPCs at the current location)."),
		},
		func(tc *ToolContext, a struct {
			Narration string   `json:"narration"`
			Foes      []string `json:"foes"`
		}) (any, error) {
			if len(a.Foes) == 0 {
				return nil, errf("start_combat needs at least one foe id.")
			}
			out := &Output{Tool: "start_combat", Narration: strings.TrimSpace(a.Narration)}
			cb, evs, err := tc.State.StartCombat(tc.Dice, a.Foes)
			if err != nil {
				return nil, err
			}
			tc.Output = out
			tc.emit(narrationEvent(tc, engine.AgentNarrative, out))
			markResultSeen(tc)
			// Dice first, then combat_started, then the mode change.
			var mode []engine.Event
			for _, e := range evs {
				if e.Kind == engine.EventMode {
					mode = append(mode, e)
				} else {
					tc.emit(e)
				}
			}
			started := engine.CombatStartedEvent(cb)
			tc.emit(started)
			tc.emit(mode...)
			return map[string]any{"combat_id": cb.ID, "initiative": started.Data.(engine.CombatStartedData).Initiative}, nil
		})
}

func markResultSeen(tc *ToolContext) {
	if tc.State.Game.LastCombatResult != nil {
		tc.State.Game.ResultSeen = true
	}
}

func narrationEvent(tc *ToolContext, agentName string, o *Output) engine.Event {
	return engine.NarrationEvent(agentName, o.Narration, o.Hints, tc.Turn.ActionID)
}
