package engine

// The NPCs the DM creates in play: the same profile as the adventure's
// NPCs (world.go's NPC), bounded by the table's encounter budget so that
// a created foe fits the party as the adventure's encounters do.

import (
	"slices"
	"strings"
)

// Bounds of a created NPC's words (the profile the DM plays it from).
const (
	maxNPCNameLen    = 40
	maxNPCKindLen    = 40
	maxNPCFactionLen = 40
	maxNPCProfileLen = 300 // personality, tactics, secret
	// maxNPCLevel is the highest level the DM may create, at any table.
	maxNPCLevel = 3
)

// NewNPCSpec is the profile the DM gives a new NPC: the fields of an
// adventure's NPC (adventures/*.yaml). Zero values take defaults: level 1,
// HP and stats from the level, "neutral" behaviour ("hostile" when
// Hostile), no armour. The JSON names are the create_npc tool's
// arguments.
type NewNPCSpec struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Location    string `json:"location"`
	Hostile     bool   `json:"hostile"`
	Behavior    string `json:"behavior"`
	Disposition int    `json:"disposition"`
	Faction     string `json:"faction"`
	Personality string `json:"personality"`
	Tactics     string `json:"tactics"`
	Secret      string `json:"secret"`
	Level       int    `json:"level"`
	HP          int    `json:"hp"`
	// Stats left at 0 take the level's default.
	Stats  Stats  `json:"stats"`
	Weapon string `json:"weapon"`
	Armour string `json:"armour"`
}

// NPCBudget is the most a created NPC may be at a table: what
// [State.NPCBudget] allows.
type NPCBudget struct {
	// Power is the party's power it was computed for ([State.PartyPower]).
	Power int
	// MaxLevel is the highest level a created NPC may have.
	MaxLevel int
	ruleset  string
}

// NPCBudget is the table's budget for one created NPC, derived from how
// scaleEncounter fits a fight to the party. A weaker party than the
// adventures are written for meets at most power+1 level-1 foes in all,
// so one NPC alone is at most level power+1 (and never above 3). HP,
// stats and armour are bounded per level as the adventure's NPCs are
// written; the fight then scales the HP to the party like any other foe.
func (s *State) NPCBudget() NPCBudget {
	p := s.PartyPower()
	return NPCBudget{Power: p, MaxLevel: max(1, min(maxNPCLevel, p+1)), ruleset: s.Config.Ruleset}
}

// BaseHP is the HP of a created NPC of level l when the DM names none.
func (b NPCBudget) BaseHP(l int) int {
	if b.ruleset == RulesetD20 {
		return 3 + 4*l
	}
	return 8 + 6*l
}

// MaxHP is the most HP a created NPC of level l may have: half again its
// base, room for the sturdiest of the adventure's NPCs (Maren Voss,
// level 2, 30 HP).
func (b NPCBudget) MaxHP(l int) int { return b.BaseHP(l) * 3 / 2 }

// MaxStat is the highest stat of an NPC of level l (the adventure's
// archer has AGI 15 at level 1, its hermit WIS 17 at level 3).
func (b NPCBudget) MaxStat(l int) int { return 14 + l }

// MaxAbsorption is the strongest armour (d100 absorption; its d20 AC goes
// with it) an NPC of level l may wear: leather at level 1, chain mail at
// level 3.
func (b NPCBudget) MaxAbsorption(l int) int { return l + 1 }

// CreateNPC creates an NPC from spec at a known location (default: the
// party's), after checking it against the table's [NPCBudget]. Errors are
// EINVALID or ENOTFOUND, their messages sentences for the model naming
// the limit.
func (s *State) CreateNPC(id string, spec NewNPCSpec) (*NPC, []Event, error) {
	n, err := s.newNPC(id, spec)
	if err != nil {
		return nil, nil, err
	}
	s.World.NPCs[id] = n
	return n, []Event{NPCCreatedEvent(n)}, nil
}

func (s *State) newNPC(id string, spec NewNPCSpec) (*NPC, error) {
	// A model's NPC is named by the rule players' names follow.
	name, err := CleanName("The NPC's name", spec.Name, maxNPCNameLen)
	if err != nil {
		return nil, err
	}
	loc := s.FindLocation(spec.Location)
	if spec.Location == "" {
		loc = s.World.Locations[s.Game.Location]
	}
	if loc == nil {
		return nil, Errorf(ENOTFOUND, "No location %q.", spec.Location)
	}
	texts := []struct {
		what string
		p    *string
		max  int
	}{{"The kind", &spec.Kind, maxNPCKindLen}, {"The faction", &spec.Faction, maxNPCFactionLen},
		{"The personality", &spec.Personality, maxNPCProfileLen}, {"The tactics", &spec.Tactics, maxNPCProfileLen}, {"The secret", &spec.Secret, maxNPCProfileLen}}
	for _, t := range texts {
		v, err := CleanText(t.what, *t.p, t.max)
		if err != nil {
			return nil, err
		}
		*t.p = v
	}
	b := s.NPCBudget()
	if spec.Level == 0 {
		spec.Level = 1
	}
	if spec.Level < 1 || spec.Level > b.MaxLevel {
		return nil, Errorf(EINVALID, "A new NPC here has level 1 to %d: the party's power is %d, and a fight holds at most power+1 levels of foes (never above %d).",
			b.MaxLevel, b.Power, maxNPCLevel)
	}
	l := spec.Level
	if spec.HP == 0 {
		spec.HP = b.BaseHP(l)
	}
	if spec.HP < 1 || spec.HP > b.MaxHP(l) {
		return nil, Errorf(EINVALID, "A level-%d NPC has 1 to %d HP; ask for %d or fewer.", l, b.MaxHP(l), b.MaxHP(l))
	}
	stats, err := b.stats(l, spec.Stats)
	if err != nil {
		return nil, err
	}
	if spec.Weapon != "" && (s.Catalogue == nil || s.Catalogue.Category(spec.Weapon) != "weapon") {
		return nil, Errorf(EINVALID, "Unknown weapon %q: use a catalogue weapon id.", spec.Weapon)
	}
	if err := s.checkArmour(b, l, spec.Armour); err != nil {
		return nil, err
	}
	if spec.Disposition < -100 || spec.Disposition > 100 {
		return nil, Errorf(EINVALID, "Disposition is -100 (hates the party) to 100 (loves it).")
	}
	if spec.Behavior == "" {
		spec.Behavior = "neutral"
		if spec.Hostile {
			spec.Behavior = "hostile"
		}
	}
	if !slices.Contains(Behaviors, spec.Behavior) {
		return nil, Errorf(EINVALID, "Unknown behaviour %q; behaviours: %s.", spec.Behavior, strings.Join(Behaviors, ", "))
	}
	if spec.Kind == "" {
		spec.Kind = "person"
	}
	return &NPC{ID: id, Name: name, Kind: spec.Kind, Location: loc.ID,
		Hostile:  spec.Hostile || spec.Behavior == "hostile" || spec.Behavior == "aggressive",
		Behavior: spec.Behavior, Disposition: spec.Disposition, Faction: spec.Faction,
		Personality: spec.Personality, Tactics: spec.Tactics, Secret: spec.Secret,
		Level: l, HP: spec.HP, MaxHP: spec.HP, Stats: stats, Weapon: spec.Weapon, Armour: spec.Armour, Statuses: []string{}}, nil
}

// stats fills the stats left at 0 with the level's defaults and checks
// each is 3 to MaxStat(l).
func (b NPCBudget) stats(l int, st Stats) (Stats, error) {
	def := Stats{STR: 10 + l, AGI: 10 + l, CON: 10, INT: 10, WIS: 10, CHA: 10}
	fields := []struct {
		name   string
		v, def *int
	}{{"str", &st.STR, &def.STR}, {"agi", &st.AGI, &def.AGI}, {"con", &st.CON, &def.CON},
		{"int", &st.INT, &def.INT}, {"wis", &st.WIS, &def.WIS}, {"cha", &st.CHA, &def.CHA}}
	for _, f := range fields {
		if *f.v == 0 {
			*f.v = *f.def
		}
		if *f.v < 3 || *f.v > b.MaxStat(l) {
			return Stats{}, Errorf(EINVALID, "A level-%d NPC's stats are 3 to %d; %s %d is out of range.", l, b.MaxStat(l), f.name, *f.v)
		}
	}
	return st, nil
}

// checkArmour checks that id is catalogue armour no stronger than a
// level-l NPC may wear ("" is none).
func (s *State) checkArmour(b NPCBudget, l int, id string) error {
	if id == "" {
		return nil
	}
	if s.Catalogue == nil || s.Catalogue.Category(id) != "armour" {
		return Errorf(EINVALID, "Unknown armour %q: use a catalogue armour id.", id)
	}
	if a := s.Catalogue.Armour(id); a.Absorption > b.MaxAbsorption(l) {
		var fit []string
		for _, x := range s.Catalogue.Armours {
			if x.Absorption <= b.MaxAbsorption(l) {
				fit = append(fit, x.ID)
			}
		}
		return Errorf(EINVALID, "%s is too strong for a level-%d NPC; it may wear %s.", a.Name, l, fmtNames(fit))
	}
	return nil
}

func fmtNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
