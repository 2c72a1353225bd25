package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// The offline narrator's handling of the living world: seed 001's
// gameplay scenarios (an NPC follows, trading, quests, exploring a new
// place, threats, looting, reputation) and session starts from backstories.
// Each intent is a small plan: given the tool results of the turn so far,
// the next call.

var (
	reFollow   = regexp.MustCompile(`\b(follow|come with|join (us|me)|accompany|travel with)\b`)
	reBuy      = regexp.MustCompile(`\b(buy|purchase)\b`)
	reGive     = regexp.MustCompile(`\b(give|deliver|hand|return|bring)\b`)
	reAccept   = regexp.MustCompile(`\b(accept|we'll do it|i'll do it|take (the|your) (job|quest|task))\b`)
	reExplore  = regexp.MustCompile(`\b(explore|discover|venture into|delve into)\s+(?:the\s+|a\s+|an\s+)?(.+)$`)
	reThreaten = regexp.MustCompile(`\b(threaten|threatens|intimidate|menace|bully)\b`)
	reLoot     = regexp.MustCompile(`\b(loot|search (the |their |his |her )?(body|bodies|corpse|corpses|remains|dead|fallen))\b`)
)

// worldIntent returns the next call of a world scenario, if the turn is one.
func (t *offlineTurn) worldIntent() (agent.ToolCall, bool) {
	if t.Ctx.Kind == agent.TurnStart {
		return t.startSession(), true
	}
	text := strings.ToLower(t.Words)
	words := tokens(text)
	switch {
	case reLoot.MatchString(text):
		return t.loot(), true
	case reThreaten.MatchString(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.threaten(n), true
		}
	case reFollow.MatchString(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.follow(n), true
		}
	case reBuy.MatchString(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.buy(n, words), true
		}
	case reGive.MatchString(text):
		if n := t.matchNPC(words, false); n != nil {
			return t.give(n, words), true
		}
	case reAccept.MatchString(text):
		return t.accept(), true
	}
	if m := reExplore.FindStringSubmatch(text); m != nil && t.matchExit(tokens(m[2])) == nil {
		return t.explore(m[2]), true
	}
	return agent.ToolCall{}, false
}

// stepNamed returns the result of the first step calling name.
func (t *offlineTurn) stepNamed(name string) (step, bool) {
	for _, s := range t.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return step{}, false
}

// stepWith returns the step calling name whose argument key is value.
func (t *offlineTurn) stepWith(name, key, value string) (step, bool) {
	for _, s := range t.Steps {
		if s.Name == name && s.Args[key] == value {
			return s, true
		}
	}
	return step{}, false
}

func (t *offlineTurn) failed() (string, bool) {
	for _, s := range t.Steps {
		if s.Err {
			return strings.TrimPrefix(s.Result, "Error: "), true
		}
	}
	return "", false
}

func decodeStep[T any](s step) T {
	var v T
	_ = json.Unmarshal([]byte(s.Result), &v)
	return v
}

// follow: an NPC follows the party if it likes the character enough
// (relationship above 25).
func (t *offlineTurn) follow(n *agent.NPCBrief) agent.ToolCall {
	rel, ok := t.stepNamed("get_relationship")
	if !ok {
		return call("get_relationship", map[string]any{"b": n.ID})
	}
	if msg, bad := t.failed(); bad {
		return t.respond(msg, t.hints())
	}
	v := decodeStep[struct{ Value int }](rel).Value
	if v <= 25 {
		return t.respond(fmt.Sprintf("%s shakes their head. \"I don't know you well enough for that.\"", n.Name), t.hints())
	}
	if _, ok := t.stepNamed("update_npc_behavior"); !ok {
		return call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "following"})
	}
	if _, ok := t.stepNamed("update_npc_disposition"); !ok {
		return call("update_npc_disposition", map[string]any{"npc": n.ID, "delta": 5})
	}
	return t.respond(fmt.Sprintf("%s nods, pleased to be asked, and falls in beside you. \"Lead on.\"", n.Name), t.hints())
}

// buy: find the item the words name (or the first thing for sale) in the
// NPC's stock and buy it; a good customer is liked better.
func (t *offlineTurn) buy(n *agent.NPCBrief, words map[string]bool) agent.ToolCall {
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
			Items []struct {
				InstanceID string `json:"instance_id"`
				Name       string `json:"name"`
			} `json:"items"`
		}](inv).Items
		if len(stock) == 0 {
			return t.respond(fmt.Sprintf("%s spreads empty hands: nothing left to sell.", n.Name), t.hints())
		}
		pick, best := stock[0].InstanceID, 0
		for _, it := range stock {
			if s := score(words, it.Name); s > best {
				pick, best = it.InstanceID, s
			}
		}
		return call("buy_item", map[string]any{"item": pick, "from": n.ID})
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

type questView struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Giver        string `json:"giver"`
	Status       string `json:"status"`
	Requires     string `json:"requires"`
	RequiresName string `json:"requires_name"`
}

// give: hand an item the words name to an NPC; if it completes that NPC's
// quest, complete it (the engine checks and pays) and the NPC is grateful.
func (t *offlineTurn) give(n *agent.NPCBrief, words map[string]bool) agent.ToolCall {
	me := t.me()
	if me == nil {
		return t.respond("Nobody acts.", nil)
	}
	gave, ok := t.stepNamed("give_item")
	if !ok {
		pick, best := "", 0
		for _, it := range me.Items {
			if s := score(words, it.Name); s > best {
				pick, best = it.ID, s
			}
		}
		if pick == "" {
			return t.respond(fmt.Sprintf("You search your pack, but carry nothing like that to give %s.", n.Name), t.hints())
		}
		return call("give_item", map[string]any{"item": pick, "to": n.ID})
	}
	if gave.Err {
		return t.respond(strings.TrimPrefix(gave.Result, "Error: "), t.hints())
	}
	given := decodeStep[struct{ Given string }](gave).Given
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

// accept: take on the first quest offered by an NPC here.
func (t *offlineTurn) accept() agent.ToolCall {
	qs, ok := t.stepNamed("get_player_quests")
	if !ok {
		return call("get_player_quests", map[string]any{})
	}
	here := map[string]string{}
	if t.Ctx.Location != nil {
		for _, n := range t.Ctx.Location.NPCs {
			here[n.ID] = n.Name
		}
	}
	var quest *questView
	for _, q := range decodeStep[[]questView](qs) {
		if _, ok := here[q.Giver]; ok && q.Status == engine.QuestOffered {
			quest = &q
			break
		}
	}
	if quest == nil {
		return t.respond("Nobody here has offered you a task to accept.", t.hints())
	}
	if _, ok := t.stepNamed("update_quest_status"); !ok {
		return call("update_quest_status", map[string]any{"quest": quest.ID, "status": engine.QuestActive})
	}
	return t.respond(fmt.Sprintf("%s clasps your hand. The quest is yours: %s.", here[quest.Giver], quest.Name), t.hints())
}

// threaten: the NPC turns defensive, likes the party less, and resents the
// character.
func (t *offlineTurn) threaten(n *agent.NPCBrief) agent.ToolCall {
	for _, c := range []agent.ToolCall{
		call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "defensive"}),
		call("update_npc_disposition", map[string]any{"npc": n.ID, "delta": -15}),
		call("update_relationship", map[string]any{"b": n.ID, "delta": -25}),
	} {
		if _, done := t.stepNamed(c.Function.Name); !done {
			return c
		}
	}
	return t.respond(fmt.Sprintf("%s stiffens and steps back, hand drifting to a weapon. \"Careful,\" %s says coldly. \"I'll remember this.\"", n.Name, n.Name), t.hints())
}

// loot: pick up what lies here (the fallen drop their belongings) and take
// what dead NPCs still carry; a little XP for the search.
func (t *offlineTurn) loot() agent.ToolCall {
	items, ok := t.stepNamed("get_items_at_location")
	if !ok {
		return call("get_items_at_location", map[string]any{})
	}
	var dead []agent.NPCBrief
	if t.Ctx.Location != nil {
		for _, n := range t.Ctx.Location.NPCs {
			if engine.HasStatus(n.Statuses, engine.StatusDead) {
				dead = append(dead, n)
			}
		}
	}
	took := map[string]bool{}
	var names []string
	for _, s := range t.Steps {
		if (s.Name == "pickup_item" || s.Name == "transfer_item") && !s.Err {
			id, _ := s.Args["item"].(string)
			took[id] = true
			var r struct {
				PickedUp string `json:"picked_up"`
				Item     string `json:"item"`
			}
			_ = json.Unmarshal([]byte(s.Result), &r)
			names = append(names, strings.ToLower(r.PickedUp+r.Item))
		}
	}
	if len(took) < 3 {
		for _, it := range decodeStep[[]struct {
			InstanceID string `json:"instance_id"`
			Template   string `json:"template"`
		}](items) {
			if !took[it.InstanceID] && it.Template != "bone-totem" {
				return call("pickup_item", map[string]any{"item": it.InstanceID})
			}
		}
		for _, n := range dead {
			inv, ok := t.stepWith("get_npc_inventory", "npc", n.ID)
			if !ok {
				return call("get_npc_inventory", map[string]any{"npc": n.ID})
			}
			for _, it := range decodeStep[struct {
				Items []struct {
					InstanceID string `json:"instance_id"`
				} `json:"items"`
			}](inv).Items {
				if !took[it.InstanceID] {
					return call("transfer_item", map[string]any{"item": it.InstanceID, "new_owner_type": engine.OwnerCharacter, "new_owner": t.Ctx.Actor.ID})
				}
			}
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

// explore: a place that is not on the map yet is created next to here; the
// party goes in, finds something lurking and something lying about.
func (t *offlineTurn) explore(what string) agent.ToolCall {
	name := titleCase(strings.TrimRight(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(what, "i "), "we ")), ".!? "))
	name = strings.TrimSuffix(strings.TrimSuffix(name, " I Discovered"), " We Found")
	if len(name) > 40 {
		name = name[:40]
	}
	if _, ok := t.stepNamed("list_all_locations"); !ok {
		return call("list_all_locations", map[string]any{})
	}
	made, ok := t.stepNamed("create_location")
	if !ok {
		return call("create_location", map[string]any{"name": name,
			"description": fmt.Sprintf("%s: cold air, dripping stone and a darkness that swallows torchlight.", name)})
	}
	if made.Err {
		return t.respond(strings.TrimPrefix(made.Result, "Error: "), t.hints())
	}
	loc := decodeStep[struct{ ID string }](made).ID
	if _, ok := t.stepNamed("move_party"); !ok {
		return call("move_party", map[string]any{"to": loc})
	}
	dark := strings.Contains(strings.ToLower(name), "cave") || strings.Contains(strings.ToLower(name), "dark") || strings.Contains(strings.ToLower(name), "ruin")
	if _, ok := t.stepNamed("create_npc"); !ok && dark {
		return call("create_npc", map[string]any{"name": "Cave spider", "kind": "monster", "location": loc, "personality": "patient, hungry",
			"hostile": true, "behavior": "aggressive", "level": 1, "weapon": "fangs"})
	}
	if _, ok := t.stepNamed("spawn_item_at_location"); !ok {
		return call("spawn_item_at_location", map[string]any{"template": "rope", "name": "Frayed rope", "location": loc, "flaws": []string{"frayed"}})
	}
	s := fmt.Sprintf("You step into %s. The air is cold and still.", name)
	if dark {
		s += " Something many-legged shifts in the dark above you: a cave spider."
	}
	s += " A frayed rope lies coiled by the entrance."
	return t.respond(s, []string{"attack the cave spider", "take the frayed rope", "go back"})
}

// reactions describe how the NPCs here greet the character after a move,
// by their relationship (seed 001 scenario 8); the cold ones turn cold.
func (t *offlineTurn) reactions(moved step) (agent.ToolCall, bool) {
	npcs, ok := t.stepNamed("get_npcs_at_location")
	if !ok {
		return call("get_npcs_at_location", map[string]any{}), true
	}
	list := decodeStep[[]struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		Behavior     string `json:"behavior"`
		Hostile      bool   `json:"hostile"`
		Alive        bool   `json:"alive"`
		Relationship int    `json:"relationship"`
	}](npcs)
	for _, n := range list {
		if n.Alive && !n.Hostile && n.Relationship <= -30 && n.Behavior != "cold" {
			if _, done := t.stepWith("update_npc_behavior", "npc", n.ID); !done {
				return call("update_npc_behavior", map[string]any{"npc": n.ID, "behavior": "cold"}), true
			}
		}
	}
	var greet []string
	for _, n := range list {
		switch {
		case !n.Alive:
		case n.Hostile:
		case n.Relationship >= 30:
			greet = append(greet, fmt.Sprintf("%s lights up and waves you over.", n.Name))
		case n.Relationship <= -30:
			greet = append(greet, fmt.Sprintf("%s turns away, cold as the river.", n.Name))
		default:
			greet = append(greet, fmt.Sprintf("%s gives you a nod.", n.Name))
		}
	}
	if len(greet) == 0 {
		return agent.ToolCall{}, false
	}
	var r struct {
		Location agent.LocationView `json:"location"`
	}
	_ = json.Unmarshal([]byte(moved.Result), &r)
	return t.respond(fmt.Sprintf("You come into %s. %s %s", r.Location.Name, r.Location.Description, strings.Join(greet, " ")), t.hints()), true
}

// ---- session start ----

var (
	reHeirloom = regexp.MustCompile(`(?i)\b(?:my|his|her|their)\s+((?:(?:late|dead|old)\s+)?(?:father|mother|grandfather|grandmother|uncle|aunt|brother|sister|mentor|master|teacher)'s\s+)?((?:old|rusty|silver|golden|battered|trusty|enchanted|broken|worn|carved|little)\s+)?(sword|blade|longsword|dagger|knife|axe|bow|staff|ring|amulet|locket|book|shield|mace|hammer|cloak|pendant|lute|flute|compass|map)\b`)
	reRelative = regexp.MustCompile(`\b(?:[Mm]y|[Hh]is|[Hh]er|[Tt]heir)\s+(?:(?:older|younger|little|big|twin|elder|dear)\s+)?(sister|brother|mother|father|uncle|aunt|cousin|friend|mentor|daughter|son|grandmother|grandfather|wife|husband)\s*,?\s*(?:named|called|is)?\s*,?\s*([A-Z][a-z]{1,20})`)
)

var heirloomTemplate = map[string]string{
	"sword": "longsword", "blade": "longsword", "longsword": "longsword", "dagger": "dagger", "knife": "dagger",
	"axe": "handaxe", "bow": "shortbow", "staff": "quarterstaff", "mace": "mace", "hammer": "mace",
}

type heirloom struct{ name, noun, owner, adjective string }

func parseHeirlooms(text string) []heirloom {
	var out []heirloom
	seen := map[string]bool{}
	for _, m := range reHeirloom.FindAllStringSubmatch(text, -1) {
		h := heirloom{owner: strings.TrimSpace(m[1]), adjective: strings.TrimSpace(m[2]), noun: strings.ToLower(m[3])}
		h.name = titleCase(strings.TrimSpace(strings.Join(strings.Fields(h.owner+" "+h.adjective+" "+h.noun), " ")))
		if !seen[h.name] {
			seen[h.name] = true
			out = append(out, h)
		}
	}
	return out
}

type relative struct{ kind, name string }

func parseRelatives(text string) []relative {
	var out []relative
	seen := map[string]bool{}
	for _, m := range reRelative.FindAllStringSubmatch(text, -1) {
		if !seen[m[2]] && m[2] != "I" {
			seen[m[2]] = true
			out = append(out, relative{kind: strings.ToLower(m[1]), name: m[2]})
		}
	}
	return out
}

func titleCase(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

// startSession brings a backstory to life: each heirloom becomes an item
// with a buff (and a flaw if it is old or broken), each named relative an
// NPC in the starting town who loves the character.
func (t *offlineTurn) startSession() agent.ToolCall {
	items := parseHeirlooms(t.Words)
	if len(items) > 2 {
		items = items[:2]
	}
	people := parseRelatives(t.Words)
	if len(people) > 2 {
		people = people[:2]
	}
	var made []string
	templatesMade := map[string]string{}
	for _, s := range t.Steps {
		if s.Name == "create_item_template" && !s.Err {
			templatesMade[s.Args["name"].(string)] = decodeStep[struct {
				ID string `json:"id"`
			}](s).ID
		}
	}
	for _, h := range items {
		if _, done := t.stepWith("create_item_for_player", "name", h.name); done {
			made = append(made, h.name)
			continue
		}
		tpl, ok := heirloomTemplate[h.noun]
		if !ok {
			tname := titleCase(h.noun)
			if id, ok := templatesMade[tname]; ok {
				tpl = id
			} else {
				if _, tried := t.stepNamed("create_item_template"); !tried || len(templatesMade) < len(items) {
					return call("create_item_template", map[string]any{"name": tname, "category": "trinket", "description": "A keepsake from home.", "value": 5})
				}
				continue
			}
		}
		buffs := []string{"heirloom: +1 morale"}
		if h.owner != "" {
			buffs = append(buffs, "carries "+strings.TrimSuffix(strings.ToLower(h.owner), "'s")+"'s memory")
		}
		var flaws []string
		switch h.adjective {
		case "old", "rusty", "battered", "broken", "worn":
			flaws = []string{"worn with age"}
		}
		args := map[string]any{"template": tpl, "name": h.name, "buffs": buffs}
		if flaws != nil {
			args["flaws"] = flaws
		}
		return call("create_item_for_player", args)
	}
	var met []string
	for _, p := range people {
		created, ok := t.stepWith("create_npc", "name", p.name)
		if !ok {
			return call("create_npc", map[string]any{"name": p.name, "kind": p.kind, "location": t.Ctx.Start,
				"personality": "loving, worried for " + t.actorName(), "behavior": "friendly"})
		}
		if created.Err {
			continue
		}
		id := decodeStep[struct {
			ID string `json:"id"`
		}](created).ID
		if _, related := t.stepWith("update_relationship", "b", id); !related {
			return call("update_relationship", map[string]any{"b": id, "delta": 30})
		}
		met = append(met, fmt.Sprintf("your %s %s", p.kind, p.name))
	}
	s := fmt.Sprintf("%s arrives in %s as the light fails.", t.actorName(), locName(t))
	if len(made) > 0 {
		s += fmt.Sprintf(" At your side: %s, heavy with memories.", strings.ToLower(strings.Join(made, " and ")))
	}
	if len(met) > 0 {
		s += fmt.Sprintf(" By the well, %s waits for you, relief on their face.", strings.Join(met, " and "))
	}
	return t.respond(s, t.hints())
}
