package adventures

import (
	"fmt"
	"slices"
	"strings"

	"tavern/internal/engine"
)

// check reports every reference that does not resolve, every duplicate id,
// every text over its limit and every number out of its range, section by
// section in the order of the format (docs/adventures.md).
func (c *checker) check(a *engine.Adventure) {
	c.header(a)
	r := &refs{a: a, cat: c.cat, locs: unique{}, npcs: unique{}, tpls: unique{}, items: unique{}, friendly: map[string]bool{}, placed: map[string]bool{}}
	c.locations(a, r)
	c.npcs(a, r)
	c.templates(a, r)
	c.items(a, r)
	c.shops(a, r)
	c.keys(a, r)
	c.quests(a, r)
	c.encounters(a, r)
}

// refs are the ids the sections define, which the later sections check
// their references against.
type refs struct {
	a                       *engine.Adventure
	cat                     *engine.Catalogue
	locs, npcs, tpls, items unique
	// friendly marks the NPCs that are not hostile.
	friendly map[string]bool
	// placed marks the templates of which an item is placed or stocked.
	placed map[string]bool
}

// itemKnown tells whether id is an item template here or catalogue
// equipment.
func (r *refs) itemKnown(id string) bool {
	return r.tpls[id] != "" || r.cat != nil && r.cat.Category(id) != ""
}

// price is what an item of template costs: its template's value here,
// else its catalogue price (as the engine's State.Price).
func (r *refs) price(template string) int {
	for _, t := range r.a.Templates {
		if t.ID == template {
			return t.Value
		}
	}
	p, _ := r.cat.Price(template)
	return p
}

// header checks the adventure's own fields and its size.
func (c *checker) header(a *engine.Adventure) {
	c.id("id", "The adventure", a.ID)
	c.text("name", "The adventure's name", a.Name, maxName, true)
	c.text("summary", "The summary", a.Summary, maxShort, false)
	c.text("intro", "The intro", a.Intro, maxLong, true)

	if len(a.Locations) == 0 {
		c.add("locations", "An adventure needs at least one location. Add a \"locations:\" list with the start location in it.")
	}
	if len(a.Locations) > MaxLocations {
		c.add("locations", "%d locations; the limit is %d. Merge some places or split the adventure.", len(a.Locations), MaxLocations)
	}
	if len(a.NPCs) > MaxNPCs {
		c.add("npcs", "%d NPCs; the limit is %d. Remove some or split the adventure.", len(a.NPCs), MaxNPCs)
	}
	stock := 0
	for _, sh := range a.Shops {
		for _, st := range sh.Stock {
			stock += max(st.Count, 1)
		}
	}
	if n := len(a.Templates) + len(a.Items) + stock; n > MaxItems {
		c.add("items", "%d items (templates, placed items and shop stock together); the limit is %d. Remove some.", n, MaxItems)
	}
}

// locations checks the places, the start and the exits (their keys wait
// for the items: keys).
func (c *checker) locations(a *engine.Adventure, r *refs) {
	for i, l := range a.Locations {
		p := fmt.Sprintf("locations[%d]", i)
		c.id(p+".id", "This location", l.ID)
		c.unique(r.locs, p+".id", "location", l.ID)
		c.text(p+".name", "The location's name", l.Name, maxName, true)
		c.text(p+".description", "The description", l.Description, maxLong, false)
	}
	switch {
	case a.Start == "":
		c.add("start", "The adventure needs a start location. Add \"start: <location id>\" with one of: %s.", known(r.locs))
	case r.locs[a.Start] == "":
		c.add("start", "The start location %q does not exist. Use one of: %s, or add a location with id %q.", a.Start, known(r.locs), a.Start)
	}
	for i, l := range a.Locations {
		for j, e := range l.Exits {
			p := fmt.Sprintf("locations[%d].exits[%d]", i, j)
			switch {
			case e.To == "":
				c.add(p, "This exit leads nowhere. Add \"to: <location id>\" with one of: %s.", known(r.locs))
			case r.locs[e.To] == "":
				c.add(p+".to", "Exit to %q, but no location has that id. Add a location with id %q or point the exit at one of: %s.", e.To, e.To, known(r.locs))
			}
			c.text(p+".name", "The exit's name", e.Name, maxName, true)
			if t := e.Trap; t != nil {
				c.trap(p+".trap", t)
			}
		}
	}
}

// npcs checks each NPC's id and profile.
func (c *checker) npcs(a *engine.Adventure, r *refs) {
	for i, n := range a.NPCs {
		p := fmt.Sprintf("npcs[%d]", i)
		c.id(p+".id", "This NPC", n.ID)
		c.unique(r.npcs, p+".id", "NPC", n.ID)
		r.friendly[n.ID] = !n.Hostile
		c.npc(p, &n, r.locs)
	}
}

// templates checks the item templates.
func (c *checker) templates(a *engine.Adventure, r *refs) {
	for i, t := range a.Templates {
		p := fmt.Sprintf("item_templates[%d]", i)
		c.id(p+".id", "This item template", t.ID)
		if c.cat != nil && c.cat.Category(t.ID) != "" {
			c.add(p+".id", "%q is catalogue equipment already. Use it as it is (template: %s) or give this template another id.", t.ID, t.ID)
		} else {
			c.unique(r.tpls, p+".id", "item template", t.ID)
		}
		c.text(p+".name", "The template's name", t.Name, maxName, true)
		c.text(p+".category", "The category", t.Category, maxID, false)
		c.text(p+".description", "The description", t.Description, maxLong, false)
		if t.Value < 0 {
			c.add(p+".value", "A value cannot be negative (%d). Use 0 for worthless things.", t.Value)
		}
	}
}

// items checks the placed items: their templates, owners and prices.
func (c *checker) items(a *engine.Adventure, r *refs) {
	for i, it := range a.Items {
		p := fmt.Sprintf("items[%d]", i)
		c.id(p+".id", "This item", it.ID)
		c.unique(r.items, p+".id", "item", it.ID)
		c.text(p+".name", "The item's name", it.Name, maxName, false)
		if !r.itemKnown(it.Template) {
			c.add(p+".template", "No item template or catalogue equipment %q. Add it under item_templates or use one of: %s.", it.Template, known(r.tpls))
		}
		r.placed[it.Template] = true
		switch it.OwnerType {
		case engine.OwnerLocation:
			if r.locs[it.OwnerID] == "" {
				c.add(p+".owner_id", "No location %q to hold this item. Use one of: %s.", it.OwnerID, known(r.locs))
			}
		case engine.OwnerNPC:
			if r.npcs[it.OwnerID] == "" {
				c.add(p+".owner_id", "No NPC %q to carry this item. Use one of: %s.", it.OwnerID, known(r.npcs))
			} else if r.friendly[it.OwnerID] && r.itemKnown(it.Template) && r.price(it.Template) <= 0 {
				// What a friendly NPC carries is for sale: one without a
				// price would be a gift the engine cannot tell from a sale.
				c.add(p+".template", "%s carries it, so it is for sale, but it has no price. Give its template a value above 0 or place it at a location.", it.OwnerID)
			}
		default:
			c.add(p+".owner_type", "owner_type must be location or npc (not %q).", it.OwnerType)
		}
	}
}

// shops checks the shops: keepers, prices and stock.
func (c *checker) shops(a *engine.Adventure, r *refs) {
	keepers := unique{}
	for i, sh := range a.Shops {
		p := fmt.Sprintf("shops[%d]", i)
		switch {
		case sh.Keeper == "":
			c.add(p, "A shop needs a keeper. Add \"keeper: <NPC id>\" with one of: %s.", known(r.npcs))
		case r.npcs[sh.Keeper] == "":
			c.add(p+".keeper", "No NPC %q to keep this shop. Use one of: %s, or add that NPC.", sh.Keeper, known(r.npcs))
		case !r.friendly[sh.Keeper]:
			c.add(p+".keeper", "%s is hostile and cannot keep a shop. Make the NPC friendly (hostile: false) or pick another keeper.", sh.Keeper)
		default:
			if first, ok := keepers[sh.Keeper]; ok {
				c.add(p+".keeper", "%s keeps another shop already (line %d). Put all its stock in one shop.", sh.Keeper, c.lines[first])
			}
			keepers[sh.Keeper] = p + ".keeper"
		}
		c.text(p+".name", "The shop's name", sh.Name, maxName, false)
		if sh.BuysAt < 0 || sh.BuysAt > 100 {
			c.add(p+".buys_at", "buys_at is a percentage of the price, 0 to 100 (not %d).", sh.BuysAt)
		}
		for j, st := range sh.Stock {
			q := fmt.Sprintf("%s.stock[%d]", p, j)
			switch {
			case !r.itemKnown(st.Item):
				c.add(q+".item", "The shop sells %q, which is neither an item template here nor catalogue equipment. Add it under item_templates or use one of: %s.", st.Item, known(r.tpls))
			case st.Price < 0:
				c.add(q+".price", "A price cannot be negative (%d).", st.Price)
			case st.Price == 0 && r.price(st.Item) <= 0:
				c.add(q+".price", "%q has no price of its own. Set \"price:\" above 0.", st.Item)
			}
			if st.Count < 0 || st.Count > maxCount {
				c.add(q+".count", "count is 1 to %d (not %d).", maxCount, st.Count)
			}
			r.placed[st.Item] = true
			for k := 1; k <= max(st.Count, 1); k++ {
				if first, ok := r.items[engine.StockID(sh.Keeper, st.Item, k)]; ok {
					c.add(q, "This stock would make an item with id %q, which the item on line %d has already. Rename that item.", engine.StockID(sh.Keeper, st.Item, k), c.lines[first])
					break
				}
			}
		}
	}
}

// keys checks that every locked exit has a key placed somewhere.
func (c *checker) keys(a *engine.Adventure, r *refs) {
	for i, l := range a.Locations {
		for j, e := range l.Exits {
			p := fmt.Sprintf("locations[%d].exits[%d].key", i, j)
			switch {
			case e.Key == "":
			case !r.itemKnown(e.Key):
				c.add(p, "The key %q is neither an item template here nor catalogue equipment. Add it under item_templates or use one of: %s.", e.Key, known(r.tpls))
			case !r.placed[e.Key]:
				c.add(p, "No item of %q is placed anywhere, so this way can never open. Place one under items (with a location or an NPC).", e.Key)
			}
		}
	}
}

// quests checks the quests: givers, required items and rewards.
func (c *checker) quests(a *engine.Adventure, r *refs) {
	quests := unique{}
	for i, q := range a.Quests {
		p := fmt.Sprintf("quests[%d]", i)
		c.id(p+".id", "This quest", q.ID)
		c.unique(quests, p+".id", "quest", q.ID)
		c.text(p+".name", "The quest's name", q.Name, maxName, true)
		c.text(p+".description", "The description", q.Description, maxLong, false)
		switch {
		case q.Giver == "":
			c.add(p, "A quest needs a giver. Add \"giver: <NPC id>\" with one of: %s.", known(r.npcs))
		case r.npcs[q.Giver] == "":
			c.add(p+".giver", "No NPC %q to give this quest. Use one of: %s.", q.Giver, known(r.npcs))
		}
		if q.Requires != "" {
			switch {
			case !r.itemKnown(q.Requires):
				c.add(p+".requires", "The quest requires %q, which is neither an item template here nor catalogue equipment. Add it under item_templates or use one of: %s.", q.Requires, known(r.tpls))
			case !r.placed[q.Requires]:
				c.add(p+".requires", "No item of %q is placed anywhere, so the quest cannot be finished. Place one under items (with a location or an NPC) or stock it in a shop.", q.Requires)
			}
		}
		if q.RewardXP < 0 || q.RewardGold < 0 {
			c.add(p, "Rewards cannot be negative.")
		}
		if q.Status != "" && !slices.Contains([]string{engine.QuestOffered, engine.QuestActive}, q.Status) {
			c.add(p+".status", "A quest starts offered or active (not %q).", q.Status)
		}
	}
}

// encounters checks the written fights: their place, foes and power.
func (c *checker) encounters(a *engine.Adventure, r *refs) {
	encs := unique{}
	for i, e := range a.Encounters {
		p := fmt.Sprintf("encounters[%d]", i)
		c.id(p+".id", "This encounter", e.ID)
		c.unique(encs, p+".id", "encounter", e.ID)
		if r.locs[e.Location] == "" {
			c.add(p+".location", "No location %q for this fight. Use one of: %s.", e.Location, known(r.locs))
		}
		if len(e.Foes) == 0 {
			c.add(p, "An encounter needs foes. Add \"foes: [<NPC id>, ...]\".")
		}
		for j, f := range e.Foes {
			q := fmt.Sprintf("%s.foes[%d]", p, j)
			var at string
			for _, n := range a.NPCs {
				if n.ID == f {
					at = n.Location
				}
			}
			switch {
			case r.npcs[f] == "":
				c.add(q, "No NPC %q to fight. Use one of: %s.", f, known(r.npcs))
			case at != e.Location && r.locs[e.Location] != "":
				c.add(q, "%s stands at %q, not at %q where this fight is. Move the NPC or the encounter.", f, at, e.Location)
			}
		}
		if e.PartyPower < 0 || e.PartyPower > maxPower {
			c.add(p+".party_power", "party_power is the sum of the levels of the party the fight is written for, 1 to %d (not %d).", maxPower, e.PartyPower)
		}
	}
}

// npc checks one NPC's profile.
func (c *checker) npc(p string, n *engine.NPC, locs unique) {
	c.text(p+".name", "The NPC's name", n.Name, maxName, true)
	c.text(p+".kind", "The kind", n.Kind, maxID, false)
	switch {
	case n.Location == "":
		c.add(p, "%s is placed nowhere. Add \"location: <location id>\" with one of: %s.", orID(n), known(locs))
	case locs[n.Location] == "":
		c.add(p+".location", "%s stands at %q, but no location has that id. Use one of: %s.", orID(n), n.Location, known(locs))
	}
	c.text(p+".personality", "The personality", n.Personality, maxShort, false)
	c.text(p+".tactics", "The tactics", n.Tactics, maxShort, false)
	c.text(p+".secret", "The secret", n.Secret, maxShort, false)
	c.text(p+".faction", "The faction", n.Faction, maxName, false)
	c.text(p+".behavior", "The behavior", n.Behavior, maxID, false)
	if n.HP <= 0 {
		c.add(p+".hp", "%s needs hit points above 0 (hp: 10 is a villager, 30 a veteran).", orID(n))
	}
	if n.HPD20 < 0 {
		c.add(p+".hp_d20", "hp_d20 cannot be negative.")
	}
	if n.Level < 0 || n.Level > maxLevel {
		c.add(p+".level", "level is 1 to %d (not %d).", maxLevel, n.Level)
	}
	if n.Disposition < -100 || n.Disposition > 100 {
		c.add(p+".disposition", "disposition is -100 (hates the party) to 100 (loves it), not %d.", n.Disposition)
	}
	if n.Gold < 0 {
		c.add(p+".gold", "gold cannot be negative.")
	}
	for _, s := range []struct {
		k string
		v int
	}{{"str", n.Stats.STR}, {"agi", n.Stats.AGI}, {"con", n.Stats.CON}, {"int", n.Stats.INT}, {"wis", n.Stats.WIS}, {"cha", n.Stats.CHA}} {
		if s.v < 0 || s.v > maxStat {
			c.add(p+".stats."+s.k, "%s is 1 to %d (10 is ordinary), not %d.", s.k, maxStat, s.v)
		}
	}
	if c.cat != nil && n.Weapon != "" && c.cat.Category(n.Weapon) != "weapon" {
		c.add(p+".weapon", "No catalogue weapon %q. Use one of: %s.", n.Weapon, catalogueIDs(c.cat, "weapon"))
	}
	if c.cat != nil && n.Armour != "" && c.cat.Category(n.Armour) != "armour" {
		c.add(p+".armour", "No catalogue armour %q. Use one of: %s.", n.Armour, catalogueIDs(c.cat, "armour"))
	}
	if len(n.Lines) > maxTraitsN {
		c.add(p+".lines", "%d lines; the limit is %d.", len(n.Lines), maxTraitsN)
	}
	for k, v := range n.Lines {
		c.text(p+".lines."+k, "The line "+k, v, maxShort, false)
	}
	if len(n.Statuses) > 0 {
		c.add(p+".statuses", "Statuses are the game's to set; remove this field.")
	}
}

func orID(n *engine.NPC) string {
	if n.ID != "" {
		return n.ID
	}
	if n.Name != "" {
		return n.Name
	}
	return "This NPC"
}

func catalogueIDs(cat *engine.Catalogue, kind string) string {
	var ids []string
	switch kind {
	case "weapon":
		for _, w := range cat.Weapons {
			ids = append(ids, w.ID)
		}
	case "armour":
		for _, a := range cat.Armours {
			ids = append(ids, a.ID)
		}
	}
	return strings.Join(ids, ", ")
}

// trap checks a trap on an exit.
func (c *checker) trap(p string, t *engine.Trap) {
	c.text(p+".description", "The trap's description", t.Description, maxShort, true)
	if !slices.Contains([]string{"str", "agi", "con", "int", "wis", "cha"}, t.Stat) {
		c.add(p+".stat", "A trap checks one stat: str, agi, con, int, wis or cha (not %q).", t.Stat)
	}
	if t.Difficulty < 1 || t.Difficulty > 100 {
		c.add(p+".difficulty", "difficulty is the d100 check's, 1 to 100 (40 is fair, 60 hard), not %d.", t.Difficulty)
	}
	if t.DC < 1 || t.DC > 30 {
		c.add(p+".dc", "dc is the d20 check's, 1 to 30 (12 is fair, 15 hard), not %d.", t.DC)
	}
	if _, _, _, err := engine.ParseNotation(t.Damage); err != nil || t.Damage == "" {
		c.add(p+".damage", "damage is dice such as 1d6 or 2d4+1 (not %q).", t.Damage)
	}
}
