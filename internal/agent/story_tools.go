package agent

// The story tools of the narrative agent: what the DM changes as the
// story demands — characters' health, gold and XP, NPCs, relationships,
// quests, new places and kinds of items — and skill checks.

import (
	"fmt"
	"strings"

	"tavern/internal/engine"
)

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
			tc.emit(engine.GoldEvent(c.ID, a.Amount, gold, a.Reason))
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
			tc.emit(engine.XPEvent(c, a.Amount))
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
			tc.emit(engine.NPCBehaviorEvent(n))
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
	stat := func(name string) map[string]any {
		return map[string]any{"description": "Optional " + name + " (3 to 14+level; default from the level).", "minimum": 3, "maximum": 17}
	}
	return defineTool("create_npc", fmt.Sprintf("Create an NPC at a location (default: here), with the profile you will play it from: level, HP, stats, weapon, armour, personality, tactics, secret, faction, disposition. The engine bounds it by the party's strength (level 1 to the party's power+1, at most 3) and says the limit if you ask for more. At most %d a turn.", lim.NPCs), []string{"name", "kind", "personality"},
		propsOf[engine.NewNPCSpec](map[string]map[string]any{
			"name": {"description": "Name."}, "kind": {"description": "What it is (merchant, sister, cave spider…)."},
			"location": {"description": "Optional location id or name."}, "hostile": {"description": "Whether it fights the party."},
			"behavior":    {"description": "Optional behaviour.", "enum": engine.Behaviors},
			"disposition": {"description": "Optional attitude to the party, -100 to 100.", "minimum": -100, "maximum": 100},
			"faction":     {"description": "Optional faction it belongs to."},
			"personality": {"description": "A few words of personality."},
			"tactics":     {"description": "Optional: how it fights (e.g. targets the weakest, flees when alone); its fight turns follow it."},
			"secret":      {"description": "Optional: what it hides; only you know it."},
			"level":       {"description": "Level (default 1).", "minimum": 1, "maximum": 3},
			"hp":          {"description": "Optional HP (default from the level; at most half again that)."},
			"stats":       {"description": "Optional stats."},
			"stats.str":   stat("strength"), "stats.agi": stat("agility"), "stats.con": stat("constitution"),
			"stats.int": stat("intelligence"), "stats.wis": stat("wisdom"), "stats.cha": stat("charisma"),
			"weapon": {"description": "Optional catalogue weapon id."}, "armour": {"description": "Optional catalogue armour id (leather at level 1, up to chain mail at 3)."},
		}),
		func(tc *ToolContext, a engine.NewNPCSpec) (any, error) {
			n, err := creating(tc, "npc", lim.NPCs, func() (*engine.NPC, error) {
				n, evs, err := tc.State.CreateNPC(tc.newID("npc"), a)
				tc.emit(evs...)
				return n, err
			})
			if err != nil {
				return nil, err
			}
			return map[string]any{"id": n.ID, "name": n.Name, "location": n.Location, "hostile": n.Hostile, "level": n.Level, "hp": n.HP}, nil
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
