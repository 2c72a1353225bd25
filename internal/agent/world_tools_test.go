package agent

import (
	"strings"
	"testing"

	"tavern/internal/engine"
)

// marketState: Aldric (c1, acting) and Brina (c2) at Market Lane with Tobin.
func marketState(t *testing.T) (*engine.State, *ToolContext) {
	t.Helper()
	st, d := fightState(t, engine.CombatTactical)
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "square"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "market"); err != nil {
		t.Fatal(err)
	}
	return st, &ToolContext{Turn: &Turn{No: 7, Kind: TurnPlayer, State: st, Dice: d, Actor: st.Party[0]}, State: st, Dice: d}
}

func TestWorldToolsSucceed(t *testing.T) {
	cases := []struct {
		tool  string
		args  any
		want  string // in the result
		check func(st *engine.State) bool
	}{
		{"get_location_info", map[string]any{}, "Market Lane", nil},
		{"get_npcs_at_location", map[string]any{}, `"relationship":25`, nil},
		{"get_relationship", map[string]any{"b": "Tobin Quill"}, `"value":25`, nil},
		{"get_player_quests", map[string]any{}, `"requires_name":"The Lantern of Greyhollow"`, nil},
		{"list_all_locations", map[string]any{}, "shrine-woods", nil},
		{"list_item_templates", map[string]any{"search": "sword"}, "shortsword", nil},
		{"list_item_templates", map[string]any{"category": "quest"}, "lantern", nil},
		{"get_items_at_location", map[string]any{"location": "square"}, "rope-1", nil},
		{"get_player_inventory", map[string]any{}, "c1-kit-1", nil},
		{"get_npc_inventory", map[string]any{"npc": "tobin"}, `"price":25`, nil},
		{"drop_item", map[string]any{"item": "c1-kit-1"}, "Healing potion", func(st *engine.State) bool {
			return st.World.Items["c1-kit-1"].OwnerType == engine.OwnerLocation && st.World.Items["c1-kit-1"].OwnerID == "market"
		}},
		{"give_item", map[string]any{"item": "c1-kit-1", "to": "Brina"}, "Brina", func(st *engine.State) bool { return st.World.Items["c1-kit-1"].OwnerID == "c2" }},
		{"transfer_item", map[string]any{"item": "potion-m1", "new_owner_type": "character", "new_owner": "Aldric"}, "Aldric", func(st *engine.State) bool {
			return st.World.Items["potion-m1"].OwnerID == "c1"
		}},
		{"buy_item", map[string]any{"item": "dagger-m1", "from": "tobin"}, `"price":2`, func(st *engine.State) bool {
			return st.World.Items["dagger-m1"].OwnerID == "c1" && st.Party[0].Gold == 8 && st.World.NPCs["tobin"].Gold == 62
		}},
		{"create_item_for_player", map[string]any{"template": "longsword", "name": "Father's sword", "buffs": []string{"heirloom: +1 morale"}, "flaws": []string{"nicked edge"}}, "Father's sword", func(st *engine.State) bool {
			it := st.World.Items["item-t7-1"]
			return it != nil && it.OwnerID == "c1" && it.Buffs[0] == "heirloom: +1 morale" && it.Flaws[0] == "nicked edge"
		}},
		{"create_item_for_npc", map[string]any{"template": "healing-potion", "npc": "tobin"}, "item-t7-1", func(st *engine.State) bool { return st.World.Items["item-t7-1"].OwnerID == "tobin" }},
		{"spawn_item_at_location", map[string]any{"template": "rope", "location": "square"}, "item-t7-1", func(st *engine.State) bool { return st.World.Items["item-t7-1"].OwnerID == "square" }},
		{"update_player_health", map[string]any{"dice": "1d4", "kind": "damage", "reason": "a fall"}, `"hp"`, func(st *engine.State) bool { return st.Party[0].HP < st.Party[0].MaxHP }},
		{"update_player_gold", map[string]any{"amount": 20, "reason": "a found purse"}, `"gold":30`, func(st *engine.State) bool { return st.Party[0].Gold == 30 }},
		{"update_player_experience", map[string]any{"amount": 40, "reason": "clever"}, `"xp":40`, func(st *engine.State) bool { return st.Party[0].XP == 40 }},
		{"move_npc", map[string]any{"npc": "tobin", "to": "square"}, "square", func(st *engine.State) bool { return st.World.NPCs["tobin"].Location == "square" }},
		{"update_npc_health", map[string]any{"npc": "tobin", "dice": "1d4", "kind": "damage"}, `"npc":"Tobin Quill"`, func(st *engine.State) bool { return st.World.NPCs["tobin"].HP < 20 }},
		{"update_npc_behavior", map[string]any{"npc": "tobin", "behavior": "wary"}, "wary", func(st *engine.State) bool { return st.World.NPCs["tobin"].Behavior == "wary" }},
		{"update_npc_disposition", map[string]any{"npc": "tobin", "delta": -10}, `"disposition":15`, nil},
		{"create_npc", map[string]any{"name": "Pip", "kind": "urchin", "personality": "sly"}, "npc-t7-1", func(st *engine.State) bool { return st.World.NPCs["npc-t7-1"].Location == "market" }},
		{"update_relationship", map[string]any{"b": "tobin", "delta": 10}, `"value":35`, func(st *engine.State) bool { return st.Relationship("c1", "tobin") == 35 }},
		{"create_quest", map[string]any{"giver": "tobin", "name": "Lost ledger", "description": "Find it.", "reward_xp": 50, "reward_gold": 20}, "quest-t7-1", nil},
		{"update_quest_status", map[string]any{"quest": "lantern-quest", "status": "active"}, "active", func(st *engine.State) bool { return st.World.Quests["lantern-quest"].Status == engine.QuestActive }},
		{"create_location", map[string]any{"name": "Tobin's cellar", "description": "Barrels."}, "tobin-s-cellar", func(st *engine.State) bool {
			return st.World.Locations["tobin-s-cellar"] != nil && len(st.World.Locations["market"].Exits) == 2
		}},
		{"create_item_template", map[string]any{"name": "Ledger", "category": "quest", "description": "Tobin's accounts.", "value": 3}, "ledger", nil},
		{"skill_check", map[string]any{"stat": "cha", "difficulty": 50}, `"success"`, nil},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			st, tc := marketState(t)
			reg := NewNarrativeTools(ToolDeps{})
			out, err := runTool(t, reg, tc, c.tool, c.args)
			if err != nil || !strings.Contains(out, c.want) {
				t.Fatalf("%s: %v, result %s (want %q)", c.tool, err, out, c.want)
			}
			if c.check != nil && !c.check(st) {
				t.Errorf("%s: the world does not show it", c.tool)
			}
		})
	}
}

func TestWorldToolsRefuse(t *testing.T) {
	cases := []struct {
		name, tool string
		args       any
		mention    string
		before     func(st *engine.State, tc *ToolContext)
	}{
		{"unknown instance id", "drop_item", map[string]any{"item": "nope"}, "No item with instance id", nil},
		{"unknown NPC", "get_npc_inventory", map[string]any{"npc": "Gandalf"}, "No NPC", nil},
		{"unknown quest", "update_quest_status", map[string]any{"quest": "dragon", "status": "active"}, "No quest", nil},
		{"wrong owner: drop", "drop_item", map[string]any{"item": "c2-kit-1"}, "not yours", nil},
		{"wrong owner: give", "give_item", map[string]any{"item": "potion-m1", "to": "Brina"}, "not yours", nil},
		{"wrong owner: buy", "buy_item", map[string]any{"item": "rope-1", "from": "tobin"}, "does not have", nil},
		{"too poor", "buy_item", map[string]any{"item": "potion-m1", "from": "tobin"}, "costs 25 gold", nil},
		{"another player's character", "transfer_item", map[string]any{"item": "c2-kit-1", "new_owner_type": "character", "new_owner": "Aldric"}, "only that player", nil},
		{"template as an instance", "drop_item", map[string]any{"item": "healing-potion"}, "is an item template, not an item", nil},
		{"instance as a template", "create_item_for_player", map[string]any{"template": "potion-m1"}, "not a template", nil},
		{"unknown template", "spawn_item_at_location", map[string]any{"template": "excalibur"}, "No item template", nil},
		{"too many traits", "create_item_for_player", map[string]any{"template": "dagger", "buffs": []string{"a", "b", "c", "d"}}, "at most 3", nil},
		{"over the item limit", "create_item_for_player", map[string]any{"template": "dagger"}, "limit", func(st *engine.State, tc *ToolContext) {
			for range 3 {
				if _, err := runTool(t, NewNarrativeTools(ToolDeps{}), tc, "create_item_for_player", map[string]any{"template": "dagger"}); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"over the NPC limit", "create_npc", map[string]any{"name": "C", "kind": "x", "personality": "y"}, "limit", func(st *engine.State, tc *ToolContext) {
			for _, n := range []string{"A", "B"} {
				if _, err := runTool(t, NewNarrativeTools(ToolDeps{}), tc, "create_npc", map[string]any{"name": n, "kind": "x", "personality": "y"}); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"gold over the cap", "update_player_gold", map[string]any{"amount": 10000, "reason": "asked nicely"}, "at most 50", nil},
		{"gold over the turn", "update_player_gold", map[string]any{"amount": 30, "reason": "b"}, "already 30", func(st *engine.State, tc *ToolContext) {
			if _, err := runTool(t, NewNarrativeTools(ToolDeps{}), tc, "update_player_gold", map[string]any{"amount": 30, "reason": "a"}); err != nil {
				t.Fatal(err)
			}
		}},
		{"xp over the cap", "update_player_experience", map[string]any{"amount": 500, "reason": "x"}, "1 to 50", nil},
		{"paying more than one has", "update_player_gold", map[string]any{"amount": -20, "reason": "x"}, "only 10 gold", nil},
		{"relationship swing", "update_relationship", map[string]any{"b": "tobin", "delta": 90}, "at most 30", nil},
		{"disposition swing", "update_npc_disposition", map[string]any{"npc": "tobin", "delta": 50}, "at most 20", nil},
		{"quest reward cap", "create_quest", map[string]any{"giver": "tobin", "name": "x", "description": "y", "reward_gold": 10000}, "0-150 gold", nil},
		{"quest not done", "update_quest_status", map[string]any{"quest": "lantern-quest", "status": "completed"}, "must first be given to Maren Voss", nil},
		{"unknown behaviour", "update_npc_behavior", map[string]any{"npc": "tobin", "behavior": "dancing"}, "Unknown behaviour", nil},
		{"NPC too far", "move_npc", map[string]any{"npc": "hermit", "to": "tavern"}, "cannot get to", nil},
		{"location exists", "create_location", map[string]any{"name": "The Old Mill", "description": "x"}, "already exists", nil},
		{"heavy dice", "update_player_health", map[string]any{"dice": "50d100", "kind": "heal", "reason": "x"}, "too strong", nil},
		{"skill stat", "skill_check", map[string]any{"stat": "luck", "difficulty": 50}, "stat must be", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, tc := marketState(t)
			if c.before != nil {
				c.before(st, tc)
			}
			snap := mustJSON(st)
			_, err := runTool(t, NewNarrativeTools(ToolDeps{}), tc, c.tool, c.args)
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("err = %v, want it to mention %q", err, c.mention)
			}
			if mustJSON(st) != snap {
				t.Error("a refused call changed the world")
			}
		})
	}
}
