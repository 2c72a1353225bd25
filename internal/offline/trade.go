package offline

// Items: buying from a merchant, giving an item (which may complete a
// quest), looting the fallen.

import (
	"fmt"
	"strings"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// stockItem is an item of an NPC's inventory, as get_npc_inventory
// lists it.
type stockItem struct {
	InstanceID string `json:"instance_id"`
	Name       string `json:"name"`
	Price      int    `json:"price"`
}

// buy: find the item the words name (or the first thing for sale) in the
// NPC's stock and buy it; a good customer is liked better.
func (t *offlineTurn) buy(n *agent.NPCBrief, words map[string]bool) reply {
	inv, ok := t.stepNamed("get_npc_inventory")
	if !ok {
		return call("get_npc_inventory", map[string]any{"npc": n.ID})
	}
	if msg, bad := t.failed(); bad {
		return t.respond(t.pick("nobuy", "No deal. ", "The trade falls through. ")+msg, t.hints())
	}
	bought, ok := t.stepNamed("buy_item")
	if !ok {
		stock := decodeStep[struct {
			Items []stockItem `json:"items"`
		}](inv).Items
		if len(stock) == 0 {
			if n.Kind != "merchant" {
				return t.respond(fmt.Sprintf("%s is no merchant and has nothing to sell; look for a trader's stall or cart.", n.Name), t.hints())
			}
			return t.respond(fmt.Sprintf("%s spreads empty hands: nothing left to sell.", n.Name), t.hints())
		}
		pick, ok := bestNamed(words, stock, func(it stockItem) string { return it.Name })
		if !ok {
			// Buying whatever comes first would sell an innkeeper's
			// bread to someone asking for a potion.
			var offer []string
			seen := map[string]bool{}
			for _, it := range stock {
				if !seen[it.Name] {
					seen[it.Name] = true
					offer = append(offer, fmt.Sprintf("%s (%d gold)", strings.ToLower(it.Name), it.Price))
				}
			}
			s := fmt.Sprintf("%s has nothing like that to sell, only %s.", n.Name, strings.Join(offer, ", "))
			if n.Kind != "merchant" {
				s += " For more, look for a merchant's stall or cart."
			}
			return t.respond(s, t.hints())
		}
		return call("buy_item", map[string]any{"item": pick.InstanceID, "from": n.ID})
	}
	if _, ok := t.stepNamed("update_relationship"); !ok {
		return call("update_relationship", map[string]any{"b": n.ID, "delta": 5})
	}
	b := decodeStep[struct {
		Bought   string `json:"bought"`
		Price    int    `json:"price"`
		GoldLeft int    `json:"gold_left"`
	}](bought)
	return t.respond(fmt.Sprintf("%s counts the coins with a grin. %s buys %s for %d gold (%d left).", n.Name, t.actorName(), strings.ToLower(b.Bought), b.Price, b.GoldLeft), t.hints())
}

// sell: sell the item the words name to a shopkeeper, who pays the
// shop's fraction of its price (the engine checks what it buys and its
// gold).
func (t *offlineTurn) sell(n *agent.NPCBrief, words map[string]bool) reply {
	sold, ok := t.stepNamed("sell_item")
	if !ok {
		me := t.me()
		if me == nil {
			return t.respond("Nobody acts.", nil)
		}
		pick := carried(me, words)
		if pick == "" {
			return t.respond(fmt.Sprintf("You search your pack, but carry nothing like that to sell %s.", n.Name), t.hints())
		}
		return call("sell_item", map[string]any{"item": pick, "to": n.ID})
	}
	if sold.Err {
		return t.respond(t.pick("nosell", "No sale. ", "The keeper shakes their head. ")+strings.TrimPrefix(sold.Result, "Error: "), t.hints())
	}
	r := decodeStep[struct {
		Sold     string `json:"sold"`
		Price    int    `json:"price"`
		GoldLeft int    `json:"gold_left"`
	}](sold)
	return t.respond(fmt.Sprintf("%s weighs %s in a practised hand and counts out %d gold. %s now has %d gold.", n.Name, strings.ToLower(r.Sold), r.Price, t.actorName(), r.GoldLeft), t.hints())
}

// give: hand an item the words name to an NPC; if it completes that NPC's
// quest, complete it (the engine checks and pays) and the NPC is grateful.
func (t *offlineTurn) give(n *agent.NPCBrief, words map[string]bool) reply {
	me := t.me()
	if me == nil {
		return t.respond("Nobody acts.", nil)
	}
	gave, ok := t.stepNamed("give_item")
	if !ok {
		pick := carried(me, words)
		if pick == "" {
			return t.respond(fmt.Sprintf("You search your pack, but carry nothing like that to give %s.", n.Name), t.hints())
		}
		return call("give_item", map[string]any{"item": pick, "to": n.ID})
	}
	if gave.Err {
		return t.respond(strings.TrimPrefix(gave.Result, "Error: "), t.hints())
	}
	return t.delivered(n, decodeStep[struct{ Given string }](gave).Given)
}

// delivered follows a gift: if it is what one of the NPC's open quests
// requires, the quest is completed (the engine checks and pays) and the
// NPC is grateful.
func (t *offlineTurn) delivered(n *agent.NPCBrief, given string) reply {
	qs, ok := t.stepNamed("get_player_quests")
	if !ok {
		return call("get_player_quests", map[string]any{})
	}
	var quest *questView
	for _, q := range decodeStep[[]questView](qs) {
		if q.Giver == n.ID && q.Status != engine.QuestCompleted && q.Status != engine.QuestFailed && strings.EqualFold(q.RequiresName, given) {
			quest = &q
			break
		}
	}
	if quest == nil {
		return t.respond(fmt.Sprintf("%s takes %s and turns it over thoughtfully.", n.Name, strings.ToLower(given)), t.hints())
	}
	done, ok := t.stepNamed("update_quest_status")
	if !ok {
		return call("update_quest_status", map[string]any{"quest": quest.ID, "status": engine.QuestCompleted})
	}
	if done.Err {
		return t.respond(strings.TrimPrefix(done.Result, "Error: "), t.hints())
	}
	if _, ok := t.stepNamed("update_relationship"); !ok {
		return call("update_relationship", map[string]any{"b": n.ID, "delta": 15})
	}
	r := decodeStep[engine.QuestResult](done)
	s := fmt.Sprintf("%s's eyes shine as %s takes %s. \"%s — done. Thank you.\" The party earns %d XP each and %d gold.", n.Name, n.Name, strings.ToLower(given), quest.Name, r.XP, r.Gold)
	for _, l := range r.LevelUps {
		s += " " + l + "!"
	}
	return t.respond(s, t.hints())
}

// loot: pick up what lies here (the fallen drop their belongings) and take
// what dead NPCs still carry; a little XP for the search.
func (t *offlineTurn) loot() reply {
	items, ok := t.stepNamed("get_items_at_location")
	if !ok {
		return call("get_items_at_location", map[string]any{})
	}
	took, names := t.looted()
	if len(took) < 3 {
		if c, ok := t.nextLoot(items, took); ok {
			return c
		}
	}
	if len(names) == 0 {
		return t.respond("You search carefully, but find nothing worth taking.", t.hints())
	}
	if _, ok := t.stepNamed("update_player_experience"); !ok {
		return call("update_player_experience", map[string]any{"amount": 10, "reason": "a careful search"})
	}
	return t.respond(fmt.Sprintf("%s searches the fallen and comes away with %s.", t.actorName(), strings.Join(names, ", ")), t.hints())
}

// looted returns the instance ids and names of what this turn has taken.
func (t *offlineTurn) looted() (map[string]bool, []string) {
	took := map[string]bool{}
	var names []string
	for _, s := range t.Steps {
		if (s.Name == "pickup_item" || s.Name == "transfer_item") && !s.Err {
			id, _ := s.arg("item").(string)
			took[id] = true
			r := decodeStep[struct {
				PickedUp string `json:"picked_up"`
				Item     string `json:"item"`
			}](s)
			names = append(names, strings.ToLower(r.PickedUp+r.Item))
		}
	}
	return took, names
}

// nextLoot returns the call that takes the next thing not taken yet:
// what lies here (get_items_at_location's result), then what each dead
// NPC here carries.
func (t *offlineTurn) nextLoot(items step, took map[string]bool) (reply, bool) {
	for _, it := range decodeStep[[]struct {
		InstanceID string `json:"instance_id"`
		Template   string `json:"template"`
	}](items) {
		if !took[it.InstanceID] && it.Template != "bone-totem" {
			return call("pickup_item", map[string]any{"item": it.InstanceID}), true
		}
	}
	for _, n := range t.deadHere() {
		inv, ok := t.stepWith("get_npc_inventory", "npc", n.ID)
		if !ok {
			return call("get_npc_inventory", map[string]any{"npc": n.ID}), true
		}
		for _, it := range decodeStep[struct {
			Items []struct {
				InstanceID string `json:"instance_id"`
			} `json:"items"`
		}](inv).Items {
			if !took[it.InstanceID] {
				return call("transfer_item", map[string]any{"item": it.InstanceID, "new_owner_type": engine.OwnerCharacter, "new_owner": t.Ctx.Actor.ID}), true
			}
		}
	}
	return reply{}, false
}

// deadHere lists the dead NPCs at the party's location.
func (t *offlineTurn) deadHere() []agent.NPCBrief {
	var dead []agent.NPCBrief
	if t.Ctx.Location != nil {
		for _, n := range t.Ctx.Location.NPCs {
			if engine.HasStatus(n.Statuses, engine.StatusDead) {
				dead = append(dead, n)
			}
		}
	}
	return dead
}
