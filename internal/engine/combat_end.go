package engine

import (
	"fmt"
	"slices"
)

// The end of a fight: its outcome, rewards and where the party wakes.

// EndCombat ends the fight. When an end condition holds its outcome wins
// over the one proposed; otherwise the DM may end a fight only by flight,
// surrender (npc_flee) or forced_end. Rewards are computed here from the
// defeated NPCs: XP by level and their gold, shared among the PCs still
// standing, and their items dropped where the party can take them. A
// defeated party (player_die) wakes at the start location with 1 HP.
func (s *State) EndCombat(outcome Outcome, summary string) (CombatResult, []Event, error) {
	cb := s.Game.Combat
	if cb == nil {
		return CombatResult{}, nil, Errorf(EINVALID, "There is no fight to end.")
	}
	outcome, err := s.endOutcome(cb, outcome)
	if err != nil {
		return CombatResult{}, nil, err
	}
	res := CombatResult{CombatID: cb.ID, Outcome: outcome, Loot: []string{}, Defeated: []string{}, Summary: summary}
	var evs []Event
	s.clearEffects()
	for _, e := range cb.Order {
		s.rechargeTurn(e)
	}
	s.collectSpoils(cb, &res)
	standing := s.clearCombatStatuses()
	if outcome == OutcomePlayerDie {
		res.XP, res.Gold = 0, 0
		evs = append(evs, s.reviveAtStart())
	} else {
		evs = append(evs, s.wakeUnconscious()...)
	}
	if outcome == OutcomePlayerFlee && s.Game.Previous != "" {
		evs = append(evs, s.retreat())
	}
	if outcome != OutcomePlayerDie {
		res.LevelUps, res.Shares = s.shareRewards(res.XP, res.Gold, standing)
		for _, c := range s.Party {
			if !slices.Contains(standing, c) && (res.XP > 0 || res.Gold > 0) {
				res.Missed = append(res.Missed, c.Name)
			}
		}
	}
	s.Game.Queue = s.restoredQueue(cb)
	s.Game.Combat = nil
	s.Game.Mode = ModeNarrative
	s.Game.LastCombatResult = &res
	s.Game.ResultSeen = false
	evs = append(evs, CombatEndedEvent(res), ModeEvent(ModeNarrative))
	return res, evs, nil
}

// endOutcome is the outcome a fight ends with: the end condition that holds
// (cb.Ending), else the DM's proposal if it is one the DM may choose.
func (s *State) endOutcome(cb *Combat, proposed Outcome) (Outcome, error) {
	if cb.Ending != "" {
		return cb.Ending, nil
	}
	switch proposed {
	case OutcomePlayerFlee, OutcomeNPCFlee, OutcomeForcedEnd, OutcomeErrorAbort:
		return proposed, nil
	case OutcomePlayerWin, OutcomePlayerDie:
		return "", Errorf(EINVALID, "The fight is not over: foes standing: %s; party standing: %s. Use continue_combat, or end it with player_flee, npc_flee or forced_end.",
			s.combatantNames(func(e Combatant) bool { return s.Side(e) == SideFoes && s.CanAct(e) }),
			s.combatantNames(func(e Combatant) bool { return s.Side(e) == SideParty && s.CanAct(e) }))
	}
	return "", Errorf(EINVALID, "Unknown outcome %q; use player_win, player_flee, player_die, npc_flee or forced_end.", proposed)
}

// collectSpoils adds what the dead NPCs of cb leave to res: their names,
// XP by level and gold (taken from them), and their items, dropped at the
// fight's location.
func (s *State) collectSpoils(cb *Combat, res *CombatResult) {
	for _, e := range cb.Order {
		if e.Kind != KindNPC {
			continue
		}
		n := s.World.NPCs[e.Ref]
		if n == nil || !HasStatus(n.Statuses, StatusDead) {
			continue
		}
		res.Defeated = append(res.Defeated, n.Name)
		res.XP += XPValue(n.Level)
		res.Gold += n.Gold
		n.Gold = 0
		for _, it := range s.World.ItemsOwned(OwnerNPC, n.ID) {
			it.OwnerType, it.OwnerID = OwnerLocation, cb.Location
			res.Loot = append(res.Loot, it.Name)
		}
	}
}

// clearCombatStatuses removes the statuses that last only a fight
// (defending, off-balance, and fled for PCs) and returns the PCs still
// conscious, who share the rewards.
func (s *State) clearCombatStatuses() (standing []*Character) {
	for _, c := range s.Party {
		c.Statuses = RemoveStatus(RemoveStatus(RemoveStatus(c.Statuses, StatusDefending), StatusOffBalance), StatusFled)
		if c.Conscious() {
			standing = append(standing, c)
		}
	}
	for _, n := range s.World.NPCs {
		n.Statuses = RemoveStatus(RemoveStatus(n.Statuses, StatusDefending), StatusOffBalance)
	}
	return standing
}

// reviveAtStart wakes a defeated party at the start location with 1 HP and
// half its gold.
func (s *State) reviveAtStart() Event {
	for _, c := range s.Party {
		c.HP = 1
		c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
		c.Gold /= 2
	}
	s.moveParty(s.World.Start)
	return s.partyAt(s.World.Start)
}

// wakeUnconscious brings the PCs knocked out during a fight the party
// survived back to at least 1 HP.
func (s *State) wakeUnconscious() []Event {
	var evs []Event
	for _, c := range s.Party {
		if HasStatus(c.Statuses, StatusUnconscious) {
			c.HP = max(c.HP, 1)
			c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
			evs = append(evs, HealEvent(c.Name, 1, c.HP, c.MaxHP))
		}
	}
	return evs
}

// retreat takes a fleeing party back to where it came from.
func (s *State) retreat() Event {
	s.moveParty(s.Game.Previous)
	return s.partyAt(s.Game.Location)
}

// partyAt is the event of the party set down at location, with its name
// when the world knows it (the log shows names, never ids).
func (s *State) partyAt(location string) Event {
	if l := s.World.Locations[location]; l != nil {
		return PartyMovedEvent(l)
	}
	return PartyAtEvent(location)
}

// shareRewards splits xp and gold evenly among standing (the first takes
// the odd gold) and returns the level-ups it caused.
func (s *State) shareRewards(xp, gold int, standing []*Character) (levelUps []string, shares []RewardShare) {
	if len(standing) == 0 {
		return nil, nil
	}
	xpEach, goldEach := xp/len(standing), gold/len(standing)
	for i, c := range standing {
		g := goldEach
		if i == 0 {
			g += gold - goldEach*len(standing)
		}
		c.Gold += g
		if s.GainXP(c, xpEach) {
			levelUps = append(levelUps, fmt.Sprintf("%s reaches level %d", c.Name, c.Level))
		}
		if xpEach > 0 || g > 0 {
			shares = append(shares, RewardShare{Name: c.Name, XP: xpEach, Gold: g})
		}
	}
	return levelUps, shares
}

// restoredQueue is the exploration queue saved when cb began (seed 002),
// keeping PCs who joined during the fight and dropping those who left.
func (s *State) restoredQueue(cb *Combat) []EntryID {
	q := []EntryID{}
	for _, e := range cb.SavedQueue {
		if seat, ok := e.Seat(); ok && s.CharacterBySeat(seat) != nil {
			q = append(q, e)
		}
	}
	for _, c := range s.Party {
		if !slices.Contains(q, PCEntry(c.Seat)) {
			q = append(q, PCEntry(c.Seat))
		}
	}
	return q
}

// GainXP adds XP to c and levels it up as often as the XP allows. Each level
// adds a fifth of the class's base HP (at least 1) to max HP and heals as
// much. It reports whether c levelled up.
func (s *State) GainXP(c *Character, xp int) bool {
	c.XP += xp
	up := false
	for c.XP >= XPForLevel(c.Level+1) {
		c.Level++
		gain := max(1, c.MaxHP/(4+c.Level))
		if cls, ok := s.Catalogue.Class(c.Class); ok {
			base := cls.HP
			if s.Config.Ruleset == RulesetD20 {
				base = cls.HPD20
			}
			gain = max(1, base/5)
		}
		c.MaxHP += gain
		c.HP += gain
		up = true
	}
	return up
}

func (s *State) moveParty(loc string) {
	if loc == s.Game.Location {
		return
	}
	from := s.Game.Location
	s.Game.Previous = from
	s.Game.Location = loc
	for _, c := range s.Party {
		c.Location = loc
	}
	// NPCs following the party come along.
	for _, n := range s.World.NPCs {
		if n.Location == from && n.Behavior == "following" && n.Alive() {
			n.Location = loc
		}
	}
}
