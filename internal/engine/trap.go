package engine

// Traps: a trapped exit springs on whoever leads the party through, and
// the engine rolls it, so neither a model nor the offline narrator can
// skip or soften it.

import "fmt"

// TrapSprung is what a trap on the way did to the one who led the party
// through it.
type TrapSprung struct {
	Description string `json:"description"`
	Stat        string `json:"stat"`
	// Difficulty is the one the table's ruleset checks against: the
	// trap's d100 difficulty or its d20 DC.
	Difficulty int    `json:"difficulty"`
	Leader     string `json:"leader"`
	Success    bool   `json:"success"`
	Roll       int    `json:"roll"`
	// Damage (the HP lost), HP and MaxHP are set on a failure only.
	Damage int `json:"damage,omitempty"`
	HP     int `json:"hp,omitempty"`
	MaxHP  int `json:"max_hp,omitempty"`
}

// difficulty is the trap's difficulty under ruleset.
func (t Trap) difficulty(ruleset string) int {
	if ruleset == RulesetD20 {
		return t.DC
	}
	return t.Difficulty
}

// trapLeader is the character who walks first: the one who chose the way
// if they are on their feet, else the first conscious member of the party.
func (s *State) trapLeader(leaderID string) *Character {
	if c := s.Character(leaderID); c != nil && c.Conscious() {
		return c
	}
	for _, c := range s.Party {
		if c.Conscious() {
			return c
		}
	}
	return nil
}

// springTrap rolls t's check for the leader and, on a failure, its damage.
// A party with nobody conscious is carried through unharmed.
func (s *State) springTrap(d *Dice, t Trap, leaderID string) (*TrapSprung, []Event, error) {
	c := s.trapLeader(leaderID)
	if c == nil {
		return nil, nil, nil
	}
	out := &TrapSprung{Description: t.Description, Stat: t.Stat, Difficulty: t.difficulty(s.Config.Ruleset), Leader: c.Name}
	ok, r, err := s.SkillCheck(d, c.ID, t.Stat, out.Difficulty)
	if err != nil {
		return nil, nil, fmt.Errorf("trap check: %w", err)
	}
	out.Success, out.Roll = ok, r.Total
	evs := diceEvents(d)
	if ok {
		return out, evs, nil
	}
	before := c.HP
	hp, maxHP, hurt, err := s.HealthChange(d, c.ID, t.Damage, "damage", "a trap: "+t.Description)
	if err != nil {
		return nil, nil, fmt.Errorf("trap damage: %w", err)
	}
	out.Damage, out.HP, out.MaxHP = before-hp, hp, maxHP
	return out, append(evs, hurt...), nil
}
