package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Rests (PROTOCOL.md "Abilities"): out of a fight the party rests to win
// back HP and ability uses.

// Kinds of rest.
const (
	RestShort = "short"
	RestLong  = "long"
)

// RestMark is when the party last rested: the kind of rest and the game
// turn it was taken in.
type RestMark struct {
	Kind string `json:"kind"`
	Turn int    `json:"turn"`
}

// RestOutcome is what a rest gave back.
type RestOutcome struct {
	Kind     string        `json:"kind"`
	Healed   []HealOutcome `json:"healed"`
	Restored []string      `json:"restored"`
}

// shortRestHeal is the HP each character rolls back on a short rest.
var shortRestHeal = ByRuleset{D100: "2d8+2", D20: "1d6+1"}

// Rest makes the party take a short rest (each character rolls back some
// HP; short-rest and per-turn abilities come back) or a long rest (full
// HP and every ability). The fallen come round. It is refused in a fight,
// with a hostile NPC standing at the party's location, and right after
// another rest with no other game turn played between.
func (s *State) Rest(d *Dice, kind string) (RestOutcome, []Event, error) {
	turn := s.Game.Turn
	kind = strings.ToLower(strings.TrimSpace(kind))
	switch kind {
	case "short_rest", "":
		kind = RestShort
	case "long_rest":
		kind = RestLong
	}
	if kind != RestShort && kind != RestLong {
		return RestOutcome{}, nil, Errorf(EINVALID, "A rest is short or long, not %q.", kind)
	}
	if s.Game.Combat != nil {
		return RestOutcome{}, nil, Errorf(EINVALID, "No one rests in the middle of a fight; finish it or flee first.")
	}
	var foes []string
	for _, n := range s.World.NPCsAt(s.Game.Location) {
		if n.Hostile && n.Standing() && !n.Hidden {
			foes = append(foes, n.Name)
		}
	}
	if len(foes) > 0 {
		return RestOutcome{}, nil, Errorf(EINVALID, "You cannot rest with foes about (%s); deal with them or move away first.", strings.Join(foes, ", "))
	}
	if r := s.Game.LastRest; r != nil && turn <= r.Turn+1 {
		return RestOutcome{}, nil, Errorf(EINVALID, "The party has only just rested (a %s rest); explore, talk or travel before resting again.", r.Kind)
	}
	out := RestOutcome{Kind: kind, Healed: []HealOutcome{}, Restored: []string{}}
	var evs []Event
	recharges := []string{RechargeTurn, RechargeShortRest}
	if kind == RestLong {
		recharges = append(recharges, RechargeLongRest)
	}
	for _, c := range s.Party {
		if HasStatus(c.Statuses, StatusDead) {
			continue
		}
		amount := c.MaxHP - c.HP
		if kind == RestShort {
			r, err := d.RollNotation(c.Name, "short rest", s.Ruleset().Dice(shortRestHeal))
			if err != nil {
				return RestOutcome{}, nil, err
			}
			amount = min(amount, max(0, r.Total))
		}
		evs = append(evs, diceEvents(d)...)
		before := c.HP
		c.HP = min(c.MaxHP, c.HP+amount)
		if c.HP > 0 && HasStatus(c.Statuses, StatusUnconscious) {
			c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
			evs = append(evs, StatusRemovedEvent(c.Name, StatusUnconscious))
		}
		if c.HP > before {
			evs = append(evs, HealEvent(c.Name, c.HP-before, c.HP, c.MaxHP))
		}
		out.Healed = append(out.Healed, HealOutcome{Target: c.Name, Amount: c.HP - before, HP: c.HP, MaxHP: c.MaxHP})
		key := bearer(KindPC, c.ID)
		for id, n := range s.Game.Spent[key] {
			if r, ok := ruleOf(id); ok && n > 0 && slices.Contains(recharges, r.Recharge) {
				out.Restored = append(out.Restored, fmt.Sprintf("%s: %s", c.Name, r.Name))
			}
		}
		s.restoreUses(key, recharges...)
	}
	slices.Sort(out.Restored)
	s.Game.LastRest = &RestMark{Kind: kind, Turn: turn}
	return out, evs, nil
}
