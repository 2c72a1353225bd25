package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kinds of initiative entries.
const (
	KindBookend = "bookend"
	KindNPC     = "npc"
	KindPC      = "pc"
)

// Outcome is how a fight ends (PROTOCOL.md, seed 000's
// CombatResultPayload).
type Outcome string

// Combat outcomes.
const (
	OutcomePlayerWin  Outcome = "player_win"
	OutcomePlayerFlee Outcome = "player_flee"
	OutcomePlayerDie  Outcome = "player_die"
	OutcomeNPCFlee    Outcome = "npc_flee"
	OutcomeForcedEnd  Outcome = "forced_end"
	OutcomeErrorAbort Outcome = "error_abort"
)

// ValidOutcome reports whether o is a known outcome.
func ValidOutcome(o Outcome) bool {
	switch o {
	case OutcomePlayerWin, OutcomePlayerFlee, OutcomePlayerDie, OutcomeNPCFlee, OutcomeForcedEnd, OutcomeErrorAbort:
		return true
	}
	return false
}

// Combatant is one entry of the initiative order.
type Combatant struct {
	Entry      EntryID `json:"entry"`
	Kind       string  `json:"kind"`
	Ref        string  `json:"ref,omitempty"` // NPC id or character id
	Name       string  `json:"name"`
	Initiative int     `json:"initiative"`
	Mod        int     `json:"mod"`
}

// Combat is the state of a running fight.
type Combat struct {
	ID       string      `json:"id"`
	Location string      `json:"location"`
	Round    int         `json:"round"`
	Index    int         `json:"index"`
	Order    []Combatant `json:"order"`
	// SavedQueue is the exploration queue, restored when the fight ends.
	SavedQueue []EntryID `json:"saved_queue"`
	// Ending is set when an end condition holds: the next turn is the DM's
	// forced resolution, which must end the combat with this outcome.
	Ending Outcome  `json:"ending,omitempty"`
	Log    []string `json:"log"`
	// Effects are the timed effects on combatants.
	Effects []Effect `json:"effects,omitempty"`
	// Engaged maps a combatant to the one it last struck (a friend
	// engaging a foe opens it to a sneak attack).
	Engaged map[EntryID]EntryID `json:"engaged,omitempty"`
}

// MaxRounds bounds a fight: when round MaxRounds is over, the fight ends
// with forced_end, so every fight ends.
const MaxRounds = 30

// Current returns the active entry.
func (c *Combat) Current() Combatant {
	if c.Index < 0 || c.Index >= len(c.Order) {
		return Combatant{Entry: BookendEntry, Kind: KindBookend, Name: "DM"}
	}
	return c.Order[c.Index]
}

// Entry returns the combatant with entry id, or false.
func (c *Combat) Entry(id EntryID) (Combatant, bool) {
	for _, e := range c.Order {
		if e.Entry == id {
			return e, true
		}
	}
	return Combatant{}, false
}

func (c *Combat) remove(entry EntryID) {
	i := slices.IndexFunc(c.Order, func(e Combatant) bool { return e.Entry == entry })
	if i < 0 {
		return
	}
	c.Order = slices.Delete(c.Order, i, i+1)
	c.Effects = slices.DeleteFunc(c.Effects, func(x Effect) bool { return x.Entry == entry })
	if i < c.Index {
		c.Index--
	}
	if c.Index >= len(c.Order) {
		c.Index = 0
	}
}

// CombatResult is what a fight left behind, given to the narrative agent's
// next turn (seed 000's last_combat_result).
type CombatResult struct {
	CombatID string   `json:"combat_id"`
	Outcome  Outcome  `json:"outcome"`
	XP       int      `json:"xp"`
	Gold     int      `json:"gold"`
	Loot     []string `json:"loot"`
	Defeated []string `json:"defeated"`
	LevelUps []string `json:"level_ups,omitempty"`
	Summary  string   `json:"summary"`
	// Shares says who got what of XP and Gold; Missed names the party
	// members who were not standing at the end and got nothing.
	Shares []RewardShare `json:"shares,omitempty"`
	Missed []string      `json:"missed,omitempty"`
}

// RewardShare is one character's part of a fight's rewards.
type RewardShare struct {
	Name string `json:"name"`
	XP   int    `json:"xp"`
	Gold int    `json:"gold"`
}

// DiceEvents drains the rolls recorded by d into `dice` events.
func DiceEvents(d *Dice) []Event { return diceEvents(d) }

func diceEvents(d *Dice) []Event {
	var out []Event
	for _, r := range d.TakeLog() {
		out = append(out, DiceEvent(r))
	}
	return out
}

// fighter builds the rules view of a combat entry.
func (s *State) fighter(e Combatant) Fighter {
	switch e.Kind {
	case KindNPC:
		if n := s.World.NPCs[e.Ref]; n != nil {
			return Fighter{Name: n.Name, Level: n.Level, Stats: n.Stats, Weapon: s.Catalogue.Weapon(n.Weapon), Armour: s.Catalogue.Armour(n.Armour), Statuses: n.Statuses}
		}
	case KindPC:
		if c := s.Character(e.Ref); c != nil {
			return Fighter{Name: c.Name, Level: c.Level, Stats: c.Stats, Weapon: s.Catalogue.Weapon(c.Weapon), Armour: s.Catalogue.Armour(c.Armour), Statuses: c.Statuses}
		}
	}
	return Fighter{Name: e.Name}
}

func (s *State) npcCombatant(d *Dice, n *NPC) Combatant {
	rs := s.Ruleset()
	f := Fighter{Name: n.Name, Level: n.Level, Stats: n.Stats}
	r := rs.Initiative(d, f)
	return Combatant{Entry: NPCEntry(n.ID), Kind: KindNPC, Ref: n.ID, Name: n.Name, Initiative: r.Total, Mod: rs.InitiativeMod(f)}
}

func (s *State) pcCombatant(d *Dice, c *Character) Combatant {
	rs := s.Ruleset()
	f := Fighter{Name: c.Name, Level: c.Level, Stats: c.Stats}
	r := rs.Initiative(d, f)
	return Combatant{Entry: PCEntry(c.Seat), Kind: KindPC, Ref: c.ID, Name: c.Name, Initiative: r.Total, Mod: rs.InitiativeMod(f)}
}

// SortInitiative orders combatants by initiative, then modifier, then name
// (seed 002), and puts the DM bookend first.
func SortInitiative(order []Combatant) {
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if (a.Kind == KindBookend) != (b.Kind == KindBookend) {
			return a.Kind == KindBookend
		}
		if a.Initiative != b.Initiative {
			return a.Initiative > b.Initiative
		}
		if a.Mod != b.Mod {
			return a.Mod > b.Mod
		}
		return strings.ToLower(a.Name) < strings.ToLower(b.Name)
	})
}

// StartCombat starts a fight at the party's location against the named
// NPCs (ids or names) and every other hostile NPC standing there. It rolls
// initiative for everyone, saves the exploration queue and switches the
// table to combat mode. The first turn is the DM's bookend.
func (s *State) StartCombat(d *Dice, foes []string) (*Combat, []Event, error) {
	if s.Game.Mode == ModeCombat {
		return nil, nil, Errorf(ECONFLICT, "A fight is already under way.")
	}
	loc := s.Game.Location
	in := map[string]*NPC{}
	for _, ref := range foes {
		n := s.World.FindNPC(ref, loc)
		if n == nil {
			return nil, nil, Errorf(ENOTFOUND, "There is no NPC %q; NPCs here: %s.", ref, s.npcNames(loc))
		}
		if n.Location != loc || n.Hidden {
			return nil, nil, Errorf(EINVALID, "%s is not here; NPCs here: %s.", n.Name, s.npcNames(loc))
		}
		if !n.Standing() {
			return nil, nil, Errorf(EINVALID, "%s cannot fight (%s).", n.Name, strings.Join(n.Statuses, ", "))
		}
		in[n.ID] = n
	}
	for _, n := range s.World.NPCsAt(loc) {
		if n.Hostile && n.Standing() {
			in[n.ID] = n
		}
	}
	if len(in) == 0 {
		return nil, nil, Errorf(EINVALID, "A fight needs at least one opponent; NPCs here: %s.", s.npcNames(loc))
	}
	var fighters int
	for _, c := range s.Party {
		if c.Conscious() {
			fighters++
		}
	}
	if fighters == 0 {
		return nil, nil, Errorf(EINVALID, "No conscious character can fight.")
	}
	s.Game.CombatSeq++
	cb := &Combat{
		ID: fmt.Sprintf("combat-%d", s.Game.CombatSeq), Location: loc, Round: 1,
		SavedQueue: slices.Clone(s.Game.Queue), Log: []string{},
		Order: []Combatant{{Entry: BookendEntry, Kind: KindBookend, Name: "DM"}},
	}
	for _, c := range s.Party {
		if c.Conscious() {
			cb.Order = append(cb.Order, s.pcCombatant(d, c))
		}
	}
	ids := make([]string, 0, len(in))
	for id := range in {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ids = s.scaleEncounter(ids, foes)
	for _, id := range ids {
		n := s.World.NPCs[id]
		n.Hostile = true
		n.Behavior = "hostile"
		cb.Order = append(cb.Order, s.npcCombatant(d, n))
	}
	SortInitiative(cb.Order)
	s.Game.Combat = cb
	s.Game.Mode = ModeCombat
	evs := diceEvents(d)
	evs = append(evs, ModeEvent(ModeCombat))
	return cb, evs, nil
}

// PartyPower is the fighting strength of the conscious party, in level-1
// characters: the sum of their levels. The adventures are written for a
// power of 3 (three level-1 characters).
func (s *State) PartyPower() int {
	p := 0
	for _, c := range s.Party {
		if c.Conscious() {
			p += max(c.Level, 1)
		}
	}
	return p
}

// joinCombat gives a PC arriving mid-fight a rolled place in the order.
func (s *State) joinCombat(d *Dice, c *Character) {
	cb := s.Game.Combat
	cur := cb.Current().Entry
	cb.Order = append(cb.Order, s.pcCombatant(d, c))
	SortInitiative(cb.Order)
	cb.Index = slices.IndexFunc(cb.Order, func(e Combatant) bool { return e.Entry == cur })
	if cb.Index < 0 {
		cb.Index = 0
	}
}

func (s *State) npcNames(loc string) string {
	var names []string
	for _, n := range s.World.NPCsAt(loc) {
		names = append(names, fmt.Sprintf("%s (%s)", n.Name, n.ID))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
