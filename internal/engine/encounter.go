package engine

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Fitting a fight to the party. Measured by cmd/balance: two level-1
// characters should win the opening fight most of the time but not
// always, and four should not win every time.

// encounterPower is the party power the adventures' encounters are
// written for.
const encounterPower = 3

// maxReinforcements bounds the foes a strong party brings out.
const maxReinforcements = 2

// scaleEncounter fits a fight to the party. With a weaker party than the
// encounter is written for, the foes named join and the others only up to
// power+1 in all (the weakest; the rest hang back and may join later),
// and each foe joining for the first time has its HP scaled by
// ((power+1)/(encounterPower+1))^1.5, at least half. A stronger party
// faces tougher foes (HP up to twice). A party of the encounter's power
// or more brings out one more foe, and one more for each level of power
// above it (at most maxReinforcements): copies of the weakest unnamed
// foe, each made once. ids are the NPCs that would join, sorted; the
// result is the ones that do.
//
// An adventure's encounter (Adventure.Encounters) may be written for
// another party than encounterPower, or be fixed whatever the party.
func (s *State) scaleEncounter(ids, named []string) []string {
	power := s.PartyPower()
	written := encounterPower
	for _, id := range ids {
		if e := s.World.encounterOf(id); e != nil {
			if e.Fixed {
				return ids
			}
			if e.PartyPower > 0 {
				written = e.PartyPower
			}
			break
		}
	}
	first := map[string]bool{}
	for _, ref := range named {
		if n := s.World.FindNPC(ref, s.Game.Location); n != nil {
			first[n.ID] = true
		}
	}
	if power < written && len(ids) > power+1 {
		ranked := slices.Clone(ids)
		sort.SliceStable(ranked, func(i, j int) bool {
			a, b := s.World.NPCs[ranked[i]], s.World.NPCs[ranked[j]]
			if first[a.ID] != first[b.ID] {
				return first[a.ID]
			}
			return a.Level < b.Level
		})
		keep := map[string]bool{}
		for i, id := range ranked {
			keep[id] = first[id] || i < power+1
		}
		ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !keep[id] })
	}
	if power >= written {
		ids = append(ids, s.reinforce(ids, first, min(maxReinforcements, power-written+1))...)
		sort.Strings(ids)
	}
	ratio := float64(power+1) / float64(written+1)
	f := max(0.5, min(2, math.Pow(ratio, 1.5)))
	for _, id := range ids {
		n := s.World.NPCs[id]
		if f == 1 || slices.Contains(s.Game.Scaled, id) {
			continue
		}
		s.Game.Scaled = append(s.Game.Scaled, id)
		n.MaxHP = max(1, int(float64(n.MaxHP)*f+0.5))
		n.HP = max(1, min(n.MaxHP, int(float64(n.HP)*f+0.5)))
	}
	return ids
}

// reinforce adds up to n copies of the weakest unnamed foe of ids to the
// world, at the fight's location, and returns the ids of those that are
// new. A copy is made once: a later fight here finds it already standing
// (or dead).
func (s *State) reinforce(ids []string, named map[string]bool, n int) []string {
	var base *NPC
	for _, id := range ids {
		c := s.World.NPCs[id]
		if named[id] || s.isReinforcement(c) {
			continue
		}
		if base == nil || c.Level < base.Level || c.Level == base.Level && c.MaxHP < base.MaxHP {
			base = c
		}
	}
	if base == nil {
		return nil
	}
	var out []string
	for i := range n {
		id := reinforcementID(base.ID, i)
		if _, exists := s.World.NPCs[id]; exists {
			continue
		}
		c := *base
		c.ID, c.Name = id, reinforcementName(base.Name, i)
		c.HP, c.Gold = c.MaxHP, 0
		c.Statuses = []string{}
		c.Lines = nil
		c.Abilities = nil
		s.World.NPCs[id] = &c
		if ab := s.Game.NPCAbilities[base.ID]; len(ab) > 0 {
			s.Game.NPCAbilities[id] = slices.Clone(ab)
		}
		if s.undead(base.ID) {
			s.Game.Undead = append(s.Game.Undead, id)
		}
		out = append(out, id)
	}
	return out
}

// reinforcementOrdinals name the copies of a foe, so a player can name
// the one they strike ("Second Rotfang archer").
var reinforcementOrdinals = []string{"Second", "Third"}

func reinforcementName(name string, i int) string {
	return reinforcementOrdinals[min(i, len(reinforcementOrdinals)-1)] + " " + name
}

// reinforcementID is the id of the i-th copy (from 0) of the NPC base.
func reinforcementID(base string, i int) string { return fmt.Sprintf("%s-%d", base, i+2) }

// isReinforcement tells a copy by its id and name, both made from its
// original's, which the world still holds: the store keeps those and no
// mark of its own. An NPC an adventure merely names "Second …" is none.
func (s *State) isReinforcement(n *NPC) bool {
	cut := strings.LastIndexByte(n.ID, '-')
	if cut < 0 {
		return false
	}
	k, err := strconv.Atoi(n.ID[cut+1:])
	base := s.World.NPCs[n.ID[:cut]]
	return err == nil && k >= 2 && base != nil && n.ID == reinforcementID(base.ID, k-2) && n.Name == reinforcementName(base.Name, k-2)
}
