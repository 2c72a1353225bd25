package engine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Modes of a table.
const (
	ModeNarrative = "narrative"
	ModeCombat    = "combat"
)

// Combat modes (table setting, seed 002's combat_mode).
const (
	CombatTactical  = "tactical"
	CombatNarrative = "narrative"
)

// Config is a table's rules configuration.
type Config struct {
	Ruleset      string `json:"ruleset"`
	CombatMode   string `json:"combat_mode"`
	TurnTimeoutS int    `json:"turn_timeout_s"`
	// NPCHP is NPCHPExact or NPCHPWords ("" reads as exact).
	NPCHP string `json:"npc_hp,omitempty"`
}

// Character is a player character (PC), bound to one seat.
type Character struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Class     string   `json:"class"`
	Backstory string   `json:"backstory,omitempty"`
	Level     int      `json:"level"`
	XP        int      `json:"xp"`
	HP        int      `json:"hp"`
	MaxHP     int      `json:"max_hp"`
	Gold      int      `json:"gold"`
	Stats     Stats    `json:"stats"`
	Weapon    string   `json:"weapon"`
	Armour    string   `json:"armour"`
	Location  string   `json:"location"`
	Statuses  []string `json:"statuses"`
	Seat      string   `json:"seat"`
	PlayerID  string   `json:"player_id"`
}

// Conscious reports whether the PC can act.
func (c *Character) Conscious() bool {
	return c.HP > 0 && !HasStatus(c.Statuses, StatusUnconscious) && !HasStatus(c.Statuses, StatusDead)
}

// Game is the mode and turn bookkeeping of a table.
type Game struct {
	Mode string `json:"mode"`
	// Scaled lists the NPCs whose HP were already fitted to the party
	// (scaleEncounter): each NPC is scaled once.
	Scaled []string `json:"scaled,omitempty"`
	// Wielded maps "<character id>:weapon" / ":armour" to the item
	// instance a character has equipped (an heirloom, a found blade), so
	// the sheet names it; the rules use the character's Weapon/Armour.
	Wielded map[string]string `json:"wielded,omitempty"`
	// Location is where the party is; Previous is where it came from
	// (where it runs back to when it flees).
	Location string `json:"location"`
	Previous string `json:"previous,omitempty"`
	// Queue is the exploration turn order ("pc:<seat>" entries).
	Queue []EntryID `json:"queue"`
	// Turn counts the turns played at this table; events carry "t<Turn>".
	Turn             int           `json:"turn"`
	Combat           *Combat       `json:"combat,omitempty"`
	LastCombatResult *CombatResult `json:"last_combat_result,omitempty"`
	// ResultSeen is set once the narrative agent has been given
	// LastCombatResult.
	ResultSeen bool `json:"result_seen,omitempty"`
	CombatSeq  int  `json:"combat_seq"`
	// Started lists the characters whose session start has been played.
	Started []string `json:"started,omitempty"`
	// Spent counts the ability uses spent, by bearer ("c:<character id>",
	// "n:<npc id>") and ability id; a rest or a new turn gives them back.
	Spent map[string]map[string]int `json:"spent,omitempty"`
	// NPCAbilities lists the abilities of the NPCs whose profile has any
	// (copied from the adventure when the world is made).
	NPCAbilities map[string][]string `json:"npc_abilities,omitempty"`
	// Undead lists the NPCs whose profile says they are undead (copied
	// from the adventure when the world is made).
	Undead []string `json:"undead,omitempty"`
	// LastRest is the party's last rest; a rest right after it is refused.
	LastRest *RestMark `json:"last_rest,omitempty"`
}

// State is everything one table knows. Catalogue is shared and immutable;
// everything else belongs to the State.
type State struct {
	Config    Config       `json:"config"`
	World     World        `json:"world"`
	Party     []*Character `json:"party"`
	Game      Game         `json:"game"`
	RNG       RNGState     `json:"rng"`
	Catalogue *Catalogue   `json:"-"`
}

// NewState builds the state of a new table from an adventure.
func NewState(cfg Config, adv *Adventure, cat *Catalogue, seed uint64) *State {
	if cfg.Ruleset == "" {
		cfg.Ruleset = RulesetD100
	}
	if cfg.CombatMode == "" {
		cfg.CombatMode = CombatTactical
	}
	s := &State{
		Config:    cfg,
		World:     NewWorld(adv),
		Party:     []*Character{},
		Game:      Game{Mode: ModeNarrative, Location: adv.Start, Queue: []EntryID{}},
		Catalogue: cat,
	}
	if cfg.Ruleset == RulesetD20 {
		for _, n := range s.World.NPCs {
			if n.HPD20 > 0 {
				n.HP, n.MaxHP = n.HPD20, n.HPD20
			}
		}
	}
	for _, n := range adv.NPCs {
		if len(n.Abilities) > 0 {
			if s.Game.NPCAbilities == nil {
				s.Game.NPCAbilities = map[string][]string{}
			}
			s.Game.NPCAbilities[n.ID] = slices.Clone(n.Abilities)
		}
		if n.Undead {
			s.Game.Undead = append(s.Game.Undead, n.ID)
		}
	}
	s.nameStock()
	s.RNG = NewDice(seed).State()
	return s
}

// Ruleset returns the table's ruleset.
func (s *State) Ruleset() Ruleset { return RulesetByName(s.Config.Ruleset) }

// Character returns the PC with id, or nil.
func (s *State) Character(id string) *Character {
	for _, c := range s.Party {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// CharacterBySeat returns the PC at seat, or nil.
func (s *State) CharacterBySeat(seat string) *Character {
	for _, c := range s.Party {
		if c.Seat == seat {
			return c
		}
	}
	return nil
}

// FindCharacter resolves a PC by id or case-insensitive name.
func (s *State) FindCharacter(ref string) *Character {
	if c := s.Character(ref); c != nil {
		return c
	}
	for _, c := range s.Party {
		if equalFoldTrim(c.Name, ref) {
			return c
		}
	}
	return nil
}

// NewCharacterSpec is what a player asks for when taking a seat.
type NewCharacterSpec struct {
	Name      string
	Class     string
	Backstory string
}

// classAliases are the common names of the four classes.
var classAliases = map[string]string{
	"fighter": "warrior", "barbarian": "warrior", "knight": "warrior", "soldier": "warrior", "paladin": "warrior",
	"thief": "rogue", "assassin": "rogue", "ranger": "rogue", "bard": "rogue", "scout": "rogue",
	"wizard": "mage", "sorcerer": "mage", "sorceress": "mage", "warlock": "mage", "magician": "mage",
	"priest": "cleric", "priestess": "cleric", "healer": "cleric", "monk": "cleric", "druid": "cleric",
}

// ClassAlias maps a common class name (fighter, wizard, thief, priest…)
// to one of the four classes; other names come back lower-cased.
func ClassAlias(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := classAliases[n]; ok {
		return a
	}
	return n
}

// AddCharacter creates a PC at seat for player and adds it to the party at
// the party's location. Its HP and kit come from the class in the
// catalogue. In combat the new PC rolls for a place in the initiative.
func (s *State) AddCharacter(d *Dice, id, seat, playerID string, spec NewCharacterSpec) (*Character, error) {
	cls, ok := s.Catalogue.Class(spec.Class)
	if !ok {
		cls, ok = s.Catalogue.Class(ClassAlias(spec.Class))
	}
	if spec.Class == "" {
		cls, ok = s.Catalogue.Classes[0], true
	}
	if !ok {
		names := make([]string, 0, len(s.Catalogue.Classes))
		for _, c := range s.Catalogue.Classes {
			names = append(names, c.ID)
		}
		return nil, Errorf(EINVALID, "unknown class %q; classes: %v", spec.Class, names)
	}
	hp := cls.HP
	if s.Config.Ruleset == RulesetD20 {
		hp = cls.HPD20
	}
	c := &Character{
		ID: id, Name: spec.Name, Class: cls.ID, Backstory: spec.Backstory, Level: 1,
		HP: hp, MaxHP: hp, Gold: cls.Gold, Stats: cls.Stats,
		Weapon: cls.Weapon, Armour: cls.Armour, Location: s.Game.Location,
		Statuses: []string{}, Seat: seat, PlayerID: playerID,
	}
	s.Party = append(s.Party, c)
	sort.SliceStable(s.Party, func(i, j int) bool { return SeatLess(s.Party[i].Seat, s.Party[j].Seat) })
	for i, tpl := range cls.Items {
		s.World.Items[fmt.Sprintf("%s-kit-%d", id, i+1)] = &Item{
			ID: fmt.Sprintf("%s-kit-%d", id, i+1), Template: tpl, Name: s.ItemName(tpl),
			OwnerType: OwnerCharacter, OwnerID: id,
		}
	}
	s.Game.Queue = append(s.Game.Queue, PCEntry(seat))
	if cb := s.Game.Combat; cb != nil {
		s.joinCombat(d, c)
	}
	return c, nil
}

// RemoveCharacter removes the PC at seat from the party, the queue and the
// initiative. Its items stay where it stood.
func (s *State) RemoveCharacter(seat string) *Character {
	c := s.CharacterBySeat(seat)
	if c == nil {
		return nil
	}
	s.Party = slices.DeleteFunc(s.Party, func(x *Character) bool { return x == c })
	for _, it := range s.World.ItemsOwned(OwnerCharacter, c.ID) {
		it.OwnerType, it.OwnerID = OwnerLocation, s.Game.Location
	}
	s.Game.Queue = slices.DeleteFunc(s.Game.Queue, func(e EntryID) bool { return e == PCEntry(seat) })
	if cb := s.Game.Combat; cb != nil {
		cb.SavedQueue = slices.DeleteFunc(cb.SavedQueue, func(e EntryID) bool { return e == PCEntry(seat) })
		cb.remove(PCEntry(seat))
	}
	return c
}

// ItemName returns the display name of a template id (catalogue or world).
func (s *State) ItemName(tpl string) string {
	if s.Catalogue != nil {
		if n := s.Catalogue.ItemName(tpl); n != "" {
			return n
		}
	}
	if t, ok := s.World.Templates[tpl]; ok {
		return t.Name
	}
	return tpl
}

// EntryID names a place in the initiative order or the turn queue:
// "pc:<seat>" for a PC (PCEntry), "dm:<npc id>" for an NPC (NPCEntry) and
// "dm" for the DM's round bookend (BookendEntry).
type EntryID string

// BookendEntry is the DM's round bookend entry.
const BookendEntry EntryID = "dm"

const (
	pcPrefix  = "pc:"
	npcPrefix = "dm:"
)

// PCEntry is the entry of the PC in seat.
func PCEntry(seat string) EntryID { return EntryID(pcPrefix + seat) }

// NPCEntry is the entry of the NPC whose id is npcID.
func NPCEntry(npcID string) EntryID { return EntryID(npcPrefix + npcID) }

// Seat is the seat of a PC's entry, and whether e is one ("" if not).
func (e EntryID) Seat() (string, bool) { return e.after(pcPrefix) }

// NPC is the NPC id of an NPC's entry, and whether e is one ("" if not).
func (e EntryID) NPC() (string, bool) { return e.after(npcPrefix) }

func (e EntryID) after(prefix string) (string, bool) {
	if rest, ok := strings.CutPrefix(string(e), prefix); ok {
		return rest, true
	}
	return "", false
}

// IsPC tells whether e is a PC's entry.
func (e EntryID) IsPC() bool { return strings.HasPrefix(string(e), pcPrefix) }

// IsNPC tells whether e is an NPC's entry.
func (e EntryID) IsNPC() bool { return strings.HasPrefix(string(e), npcPrefix) }

// SeatLess orders seats numerically when both are numbers ("2" < "10"),
// as the party is ordered.
func SeatLess(a, b string) bool {
	ai, aerr := strconv.Atoi(a)
	bi, berr := strconv.Atoi(b)
	if aerr == nil && berr == nil {
		return ai < bi
	}
	return a < b
}
