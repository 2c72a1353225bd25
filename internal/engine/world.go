package engine

import (
	"slices"
	"sort"
	"strings"
)

// Stats are a creature's abilities, 3..20. A stat's modifier is (v-10)/2
// rounded down, as in seed 000's initiative computation.
type Stats struct {
	STR int `json:"str" yaml:"str"`
	AGI int `json:"agi" yaml:"agi"`
	CON int `json:"con" yaml:"con"`
	INT int `json:"int" yaml:"int"`
	WIS int `json:"wis" yaml:"wis"`
	CHA int `json:"cha" yaml:"cha"`
}

// Stat names one of the six stats.
type Stat string

// The stats, as adventures, checks and the rules name them.
const (
	StatSTR Stat = "str"
	StatAGI Stat = "agi"
	StatCON Stat = "con"
	StatINT Stat = "int"
	StatWIS Stat = "wis"
	StatCHA Stat = "cha"
)

// Of returns the value of stat (any case), false for no such stat.
func (s Stats) Of(stat Stat) (int, bool) {
	switch Stat(strings.ToLower(string(stat))) {
	case StatSTR:
		return s.STR, true
	case StatAGI:
		return s.AGI, true
	case StatCON:
		return s.CON, true
	case StatINT:
		return s.INT, true
	case StatWIS:
		return s.WIS, true
	case StatCHA:
		return s.CHA, true
	}
	return 0, false
}

// Mod returns the modifier of a stat value.
func Mod(v int) int {
	if v >= 10 {
		return (v - 10) / 2
	}
	return -((11 - v) / 2)
}

// Weapon is a catalogue weapon. Damage is the flat d100 damage; Dice the d20
// damage dice.
type Weapon struct {
	ID     string `json:"id" yaml:"id"`
	Name   string `json:"name" yaml:"name"`
	Damage int    `json:"damage" yaml:"damage"`
	Dice   string `json:"dice" yaml:"dice"`
	Ranged bool   `json:"ranged,omitempty" yaml:"ranged"`
	// Finesse weapons (a dagger, a shortsword) strike with the better of
	// STR and AGI under d20.
	Finesse bool `json:"finesse,omitempty" yaml:"finesse"`
	Price   int  `json:"price,omitempty" yaml:"price"`
}

// Armour is a catalogue armour. Absorption is subtracted from d100 damage; AC
// is the d20 armour class it gives.
type Armour struct {
	ID         string `json:"id" yaml:"id"`
	Name       string `json:"name" yaml:"name"`
	Absorption int    `json:"absorption" yaml:"absorption"`
	AC         int    `json:"ac" yaml:"ac"`
	Price      int    `json:"price,omitempty" yaml:"price"`
}

// Consumable is a catalogue item used up when used: Heal is the dice healed
// under d100, HealD20 under d20.
type Consumable struct {
	ID      string `json:"id" yaml:"id"`
	Name    string `json:"name" yaml:"name"`
	Heal    string `json:"heal" yaml:"heal"`
	HealD20 string `json:"heal_d20" yaml:"heal_d20"`
	Price   int    `json:"price,omitempty" yaml:"price"`
}

// HealRoll is what the consumable heals under each ruleset.
func (c Consumable) HealRoll() ByRuleset { return ByRuleset{D100: c.Heal, D20: c.HealD20} }

// Class is a character class: its stats, hit points and starting kit.
type Class struct {
	ID      string   `json:"id" yaml:"id"`
	Name    string   `json:"name" yaml:"name"`
	Stats   Stats    `json:"stats" yaml:"stats"`
	HP      int      `json:"hp" yaml:"hp"`
	HPD20   int      `json:"hp_d20" yaml:"hp_d20"`
	Weapon  string   `json:"weapon" yaml:"weapon"`
	Armour  string   `json:"armour" yaml:"armour"`
	Items   []string `json:"items" yaml:"items"`
	Gold    int      `json:"gold" yaml:"gold"`
	Summary string   `json:"summary" yaml:"summary"`
}

// Catalogue is the equipment catalogue: the single source of truth for
// weapon damage, armour absorption and consumables, and the classes. It is
// immutable once loaded and shared by every table.
type Catalogue struct {
	Weapons     []Weapon     `json:"weapons" yaml:"weapons"`
	Armours     []Armour     `json:"armour" yaml:"armour"`
	Consumables []Consumable `json:"consumables" yaml:"consumables"`
	Classes     []Class      `json:"classes" yaml:"classes"`
}

// Weapon returns the weapon with id, or the unarmed strike.
func (c *Catalogue) Weapon(id string) Weapon {
	for _, w := range c.Weapons {
		if w.ID == id {
			return w
		}
	}
	return Weapon{ID: "", Name: "bare hands", Damage: 2, Dice: "1d2"}
}

// Armour returns the armour with id, or none.
func (c *Catalogue) Armour(id string) Armour {
	for _, a := range c.Armours {
		if a.ID == id {
			return a
		}
	}
	return Armour{Name: "no armour", AC: 10}
}

// Consumable returns the consumable with id.
func (c *Catalogue) Consumable(id string) (Consumable, bool) {
	for _, x := range c.Consumables {
		if x.ID == id {
			return x, true
		}
	}
	return Consumable{}, false
}

// Class returns the class with id (case-insensitive), or false.
func (c *Catalogue) Class(id string) (Class, bool) {
	for _, x := range c.Classes {
		if strings.EqualFold(x.ID, id) || strings.EqualFold(x.Name, id) {
			return x, true
		}
	}
	return Class{}, false
}

// ItemName returns the display name of a catalogue id, or "".
func (c *Catalogue) ItemName(id string) string {
	for _, w := range c.Weapons {
		if w.ID == id {
			return w.Name
		}
	}
	for _, a := range c.Armours {
		if a.ID == id {
			return a.Name
		}
	}
	for _, x := range c.Consumables {
		if x.ID == id {
			return x.Name
		}
	}
	return ""
}

// Price is the catalogue price of equipment id (a weapon, an armour or
// a consumable); false if id is no catalogue equipment. A nil catalogue
// has none.
func (c *Catalogue) Price(id string) (int, bool) {
	if c == nil {
		return 0, false
	}
	for _, w := range c.Weapons {
		if w.ID == id {
			return w.Price, true
		}
	}
	for _, a := range c.Armours {
		if a.ID == id {
			return a.Price, true
		}
	}
	if x, ok := c.Consumable(id); ok {
		return x.Price, true
	}
	return 0, false
}

// Category returns "weapon", "armour", "consumable" or "" for a catalogue id.
func (c *Catalogue) Category(id string) string {
	for _, w := range c.Weapons {
		if w.ID == id {
			return "weapon"
		}
	}
	for _, a := range c.Armours {
		if a.ID == id {
			return "armour"
		}
	}
	for _, x := range c.Consumables {
		if x.ID == id {
			return "consumable"
		}
	}
	return ""
}

// Exit is a way out of a location. Key and Trap are for the DM: players
// see an exit's name and where it leads (Exit.Public).
type Exit struct {
	To   string `json:"to" yaml:"to"`
	Name string `json:"name" yaml:"name"`
	// Key is the item template that opens the way: the party passes only
	// if one of its members carries such an item.
	Key string `json:"key,omitempty" yaml:"key"`
	// Trap springs on whoever leads the party through, every time.
	Trap *Trap `json:"trap,omitempty" yaml:"trap"`
}

// Public is the exit as players see it.
func (e Exit) Public() Exit { return Exit{To: e.To, Name: e.Name} }

// Trap is a danger on the way: the one who leads the party through makes
// a skill check, and takes Damage on a failure.
type Trap struct {
	Description string `json:"description" yaml:"description"`
	// Stat is the stat checked: str, agi, con, int, wis or cha.
	Stat string `json:"stat" yaml:"stat"`
	// Difficulty is the d100 check's (1..100); DC the d20 one's (1..30).
	Difficulty int `json:"difficulty" yaml:"difficulty"`
	DC         int `json:"dc" yaml:"dc"`
	// Damage is the dice a failure costs, e.g. 2d6.
	Damage string `json:"damage" yaml:"damage"`
}

// Location is a place in the world.
type Location struct {
	ID          string `json:"id" yaml:"id"`
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
	Exits       []Exit `json:"exits" yaml:"exits"`
}

// NPC is a non-player character or creature, played by the DM.
type NPC struct {
	ID          string            `json:"id" yaml:"id"`
	Name        string            `json:"name" yaml:"name"`
	Kind        string            `json:"kind" yaml:"kind"`
	Location    string            `json:"location" yaml:"location"`
	Hostile     bool              `json:"hostile" yaml:"hostile"`
	Behavior    string            `json:"behavior" yaml:"behavior"`
	Disposition int               `json:"disposition" yaml:"disposition"`
	Faction     string            `json:"faction,omitempty" yaml:"faction"`
	Personality string            `json:"personality" yaml:"personality"`
	Tactics     string            `json:"tactics,omitempty" yaml:"tactics"`
	Secret      string            `json:"secret,omitempty" yaml:"secret"`
	Lines       map[string]string `json:"lines,omitempty" yaml:"lines"`
	Level       int               `json:"level" yaml:"level"`
	HP          int               `json:"hp" yaml:"hp"`
	MaxHP       int               `json:"max_hp" yaml:"max_hp"`
	HPD20       int               `json:"-" yaml:"hp_d20"`
	Stats       Stats             `json:"stats" yaml:"stats"`
	Weapon      string            `json:"weapon,omitempty" yaml:"weapon"`
	Armour      string            `json:"armour,omitempty" yaml:"armour"`
	Gold        int               `json:"gold" yaml:"gold"`
	Hidden      bool              `json:"hidden,omitempty" yaml:"hidden"`
	Statuses    []string          `json:"statuses,omitempty" yaml:"statuses"`
	// Undead marks the restless dead, whom turn undead affects. Like
	// Abilities, a new state keeps it in the game (Game.Undead).
	Undead bool `json:"-" yaml:"undead"`
	// Abilities are the ability ids the adventure gives the NPC. A new
	// state keeps them in Game.NPCAbilities, their one home in a game:
	// the world's NPCs do not carry them (the store's NPC rows have no
	// place for them).
	Abilities []string `json:"-" yaml:"abilities"`
}

// Alive reports whether the NPC is neither dead nor fled.
func (n *NPC) Alive() bool { return !HasStatus(n.Statuses, StatusDead) }

// Standing reports whether the NPC can still act in a fight.
func (n *NPC) Standing() bool {
	return n.HP > 0 && !HasStatus(n.Statuses, StatusDead) && !HasStatus(n.Statuses, StatusFled)
}

// ItemTemplate is a kind of item defined by the adventure (catalogue
// equipment is looked up in the [Catalogue] instead).
type ItemTemplate struct {
	ID          string `json:"id" yaml:"id"`
	Name        string `json:"name" yaml:"name"`
	Category    string `json:"category" yaml:"category"`
	Description string `json:"description" yaml:"description"`
	Value       int    `json:"value" yaml:"value"`
}

// Owner kinds of an item instance.
const (
	OwnerCharacter = "character"
	OwnerNPC       = "npc"
	OwnerLocation  = "location"
)

// Item is one item instance in the world: a template (adventure or
// catalogue id) owned by a character, an NPC or a location.
type Item struct {
	ID        string   `json:"id" yaml:"id"`
	Template  string   `json:"template" yaml:"template"`
	Name      string   `json:"name" yaml:"name"`
	OwnerType string   `json:"owner_type" yaml:"owner_type"`
	OwnerID   string   `json:"owner_id" yaml:"owner_id"`
	Buffs     []string `json:"buffs,omitempty" yaml:"buffs"`
	Flaws     []string `json:"flaws,omitempty" yaml:"flaws"`
}

// Quest statuses.
const (
	QuestOffered   = "offered"
	QuestActive    = "active"
	QuestCompleted = "completed"
	QuestFailed    = "failed"
)

// Quest is a task given by an NPC.
type Quest struct {
	ID          string `json:"id" yaml:"id"`
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
	Giver       string `json:"giver" yaml:"giver"`
	Status      string `json:"status" yaml:"status"`
	RewardXP    int    `json:"reward_xp" yaml:"reward_xp"`
	RewardGold  int    `json:"reward_gold" yaml:"reward_gold"`
	// Requires is an item template that must be in the giver's hands for
	// the quest to complete ("" for none).
	Requires string `json:"requires,omitempty" yaml:"requires"`
}

// Adventure is a scenario, built in or written by a player: the world a
// new table is copied from. Its YAML form is the adventure format
// (docs/adventures.md); the JSON Schema served at
// /api/adventures/schema.json is generated from these types.
type Adventure struct {
	ID         string         `json:"id" yaml:"id"`
	Name       string         `json:"name" yaml:"name"`
	Summary    string         `json:"summary,omitempty" yaml:"summary"`
	Intro      string         `json:"intro" yaml:"intro"`
	Start      string         `json:"start" yaml:"start"`
	Locations  []Location     `json:"locations" yaml:"locations"`
	NPCs       []NPC          `json:"npcs" yaml:"npcs"`
	Templates  []ItemTemplate `json:"item_templates" yaml:"item_templates"`
	Items      []Item         `json:"items" yaml:"items"`
	Shops      []Shop         `json:"shops,omitempty" yaml:"shops"`
	Quests     []Quest        `json:"quests" yaml:"quests"`
	Encounters []Encounter    `json:"encounters,omitempty" yaml:"encounters"`
}

// World is one table's copy of an adventure's world.
type World struct {
	Start     string                   `json:"start"`
	Locations map[string]*Location     `json:"locations"`
	NPCs      map[string]*NPC          `json:"npcs"`
	Templates map[string]*ItemTemplate `json:"templates"`
	Items     map[string]*Item         `json:"items"`
	Quests    map[string]*Quest        `json:"quests"`
	// Shops are keyed by their keeper's NPC id; Encounters by id.
	Shops      map[string]*Shop      `json:"shops,omitempty"`
	Encounters map[string]*Encounter `json:"encounters,omitempty"`
	// Relationships maps "a|b" (character or NPC ids) to -100..100.
	Relationships map[string]int `json:"relationships"`
}

// NewWorld copies an adventure into a fresh world.
func NewWorld(a *Adventure) World {
	w := World{
		Start:         a.Start,
		Locations:     map[string]*Location{},
		NPCs:          map[string]*NPC{},
		Templates:     map[string]*ItemTemplate{},
		Items:         map[string]*Item{},
		Quests:        map[string]*Quest{},
		Relationships: map[string]int{},
	}
	for _, l := range a.Locations {
		l.Exits = cloneExits(l.Exits)
		w.Locations[l.ID] = &l
	}
	for _, n := range a.NPCs {
		if n.MaxHP == 0 {
			n.MaxHP = n.HP
		}
		if n.Level == 0 {
			n.Level = 1
		}
		n.Statuses = slices.Clone(n.Statuses)
		n.Abilities, n.Undead = nil, false
		w.NPCs[n.ID] = &n
	}
	for _, t := range a.Templates {
		w.Templates[t.ID] = &t
	}
	for _, it := range a.Items {
		w.Items[it.ID] = &it
	}
	for _, q := range a.Quests {
		if q.Status == "" {
			q.Status = QuestOffered
		}
		w.Quests[q.ID] = &q
	}
	w.addShops(a)
	return w
}

// NPCsAt returns the visible NPCs at a location, sorted by id.
func (w *World) NPCsAt(loc string) []*NPC {
	var out []*NPC
	for _, n := range w.NPCs {
		if n.Location == loc && !n.Hidden && !HasStatus(n.Statuses, StatusFled) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ItemsOwned returns the items of an owner, sorted by id.
func (w *World) ItemsOwned(ownerType, ownerID string) []*Item {
	var out []*Item
	for _, it := range w.Items {
		if it.OwnerType == ownerType && it.OwnerID == ownerID {
			out = append(out, it)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FindNPC resolves an NPC by id or (case-insensitive) name, preferring
// NPCs at loc when loc is not empty.
func (w *World) FindNPC(ref, loc string) *NPC {
	if n, ok := w.NPCs[ref]; ok {
		return n
	}
	var best *NPC
	for _, n := range w.NPCs {
		if !strings.EqualFold(n.Name, ref) {
			continue
		}
		if best == nil || (n.Location == loc && best.Location != loc) || (n.Location == best.Location && n.ID < best.ID) {
			best = n
		}
	}
	return best
}

// RelKey returns the key of the relationship between a and b (unordered).
func RelKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + "|" + b
}

// Statuses that the rules know.
const (
	StatusDead        = "dead"
	StatusUnconscious = "unconscious"
	StatusFled        = "fled"
	StatusDefending   = "defending"
	StatusOffBalance  = "off-balance"
)

// HasStatus reports whether s is in list.
func HasStatus(list []string, s string) bool { return slices.Contains(list, s) }

// AddStatus adds s to list if missing.
func AddStatus(list []string, s string) []string {
	if HasStatus(list, s) {
		return list
	}
	return append(list, s)
}

// RemoveStatus removes s from list.
func RemoveStatus(list []string, s string) []string {
	return slices.DeleteFunc(list, func(x string) bool { return x == s })
}
