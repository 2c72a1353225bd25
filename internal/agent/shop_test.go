package agent_test

import (
	"context"
	"strings"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/openai/openaitest"
)

// TestModelTradesAtTheShop: a model DM reads a shop's prices and terms
// with get_npc_inventory, buys at the shop's price and sells at its
// fraction (buy_item, sell_item); the engine checks the gold.
func TestModelTradesAtTheShop(t *testing.T) {
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get("barrow")
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 7)
	d := engine.NewDice(7)
	actor, err := st.AddCharacter(d, "c1", "1", "p", engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"})
	if err != nil {
		t.Fatal(err)
	}
	var kit string
	for _, it := range st.Inventory(actor.ID) {
		if it.Template == "healing-potion" {
			kit = it.ID
		}
	}
	fake := openaitest.New(t, nil)
	m := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: m, Combat: m}
	potion := engine.StockID("ilse", "healing-potion", 1)
	fake.Push(
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("get_npc_inventory", map[string]any{"npc": "ilse"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("buy_item", map[string]any{"item": potion, "from": "ilse"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("sell_item", map[string]any{"item": kit, "to": "ilse"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("sell_item", map[string]any{"item": potion, "to": "ilse"})}},
		openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "Coins change hands."})}},
	)
	actor.Gold = 20
	res, err := r.Run(context.Background(), &agent.Turn{No: 1, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: actor, Text: "I trade with Ilse"})
	if err != nil {
		t.Fatal(err)
	}
	results := toolResults(res.Messages)
	if inv := results["get_npc_inventory"]; !strings.Contains(inv, `"buys_at_percent":40`) || !strings.Contains(inv, `"price":20`) {
		t.Errorf("get_npc_inventory = %s", inv)
	}
	// Bought at the shop's 20 (not the catalogue's 25), then both potions
	// sold at 40% of the catalogue's 25: the second sale is the last
	// result of its name.
	if want := 20; actor.Gold != want { // 20, less 20 for the potion, plus 10 for each of two sold
		t.Errorf("gold %d after buying for 20 and selling two potions for 10 each; results %v", actor.Gold, results)
	}
	if it := st.World.Items[potion]; it.OwnerType != engine.OwnerNPC || it.OwnerID != "ilse" {
		t.Errorf("the potion sold back is with %s %s", it.OwnerType, it.OwnerID)
	}
}
