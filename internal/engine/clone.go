package engine

import (
	"maps"
	"slices"
)

// Clone returns a deep copy sharing only the catalogue. Nil and empty
// slices and maps stay as they are, so the copy encodes exactly as the
// original. It is a typed copy, field by field: a turn job gets one per
// turn, and a JSON round trip cost most of a turn's state handling.
// A field added to a type reachable from State must be copied
// here; TestCloneIsDeepAndEqual fails until it is.
func (s *State) Clone() *State {
	c := *s
	c.World = s.World.clone()
	if s.Party != nil {
		c.Party = make([]*Character, len(s.Party))
		for i, p := range s.Party {
			c.Party[i] = p.clone()
		}
	}
	c.Game = s.Game.clone()
	c.RNG.PCG = slices.Clone(s.RNG.PCG)
	return &c
}

func (c *Character) clone() *Character {
	if c == nil {
		return nil
	}
	n := *c
	n.Statuses = slices.Clone(c.Statuses)
	return &n
}

func (g Game) clone() Game {
	g.Queue = slices.Clone(g.Queue)
	g.Started = slices.Clone(g.Started)
	g.Scaled = slices.Clone(g.Scaled)
	g.Wielded = maps.Clone(g.Wielded)
	if g.Spent != nil {
		spent := make(map[string]map[string]int, len(g.Spent))
		for k, v := range g.Spent {
			spent[k] = maps.Clone(v)
		}
		g.Spent = spent
	}
	if g.NPCAbilities != nil {
		na := make(map[string][]string, len(g.NPCAbilities))
		for k, v := range g.NPCAbilities {
			na[k] = slices.Clone(v)
		}
		g.NPCAbilities = na
	}
	g.Undead = slices.Clone(g.Undead)
	if g.LastRest != nil {
		r := *g.LastRest
		g.LastRest = &r
	}
	if g.Combat != nil {
		cb := *g.Combat
		cb.Order = slices.Clone(cb.Order)
		cb.SavedQueue = slices.Clone(cb.SavedQueue)
		cb.Log = slices.Clone(cb.Log)
		cb.Effects = slices.Clone(cb.Effects)
		cb.Engaged = maps.Clone(cb.Engaged)
		g.Combat = &cb
	}
	if g.LastCombatResult != nil {
		r := *g.LastCombatResult
		r.Loot = slices.Clone(r.Loot)
		r.Defeated = slices.Clone(r.Defeated)
		r.LevelUps = slices.Clone(r.LevelUps)
		r.Shares = slices.Clone(r.Shares)
		r.Missed = slices.Clone(r.Missed)
		g.LastCombatResult = &r
	}
	return g
}

func (w World) clone() World {
	w.Locations = cloneMap(w.Locations, func(l Location) Location {
		l.Exits = cloneExits(l.Exits)
		return l
	})
	w.NPCs = cloneMap(w.NPCs, func(n NPC) NPC {
		n.Lines = maps.Clone(n.Lines)
		n.Statuses = slices.Clone(n.Statuses)
		n.Abilities = slices.Clone(n.Abilities)
		return n
	})
	w.Templates = cloneMap(w.Templates, func(t ItemTemplate) ItemTemplate { return t })
	w.Items = cloneMap(w.Items, func(it Item) Item {
		it.Buffs = slices.Clone(it.Buffs)
		it.Flaws = slices.Clone(it.Flaws)
		return it
	})
	w.Quests = cloneMap(w.Quests, func(q Quest) Quest { return q })
	w.Shops = cloneMap(w.Shops, func(sh Shop) Shop {
		sh.Stock = slices.Clone(sh.Stock)
		sh.Buys = slices.Clone(sh.Buys)
		return sh
	})
	w.Encounters = cloneMap(w.Encounters, func(e Encounter) Encounter {
		e.Foes = slices.Clone(e.Foes)
		return e
	})
	w.Relationships = maps.Clone(w.Relationships)
	return w
}

// cloneMap copies a map of pointers, each value copied by deep (which gets
// a shallow copy to deepen); nil stays nil, as does a nil value.
func cloneMap[T any](m map[string]*T, deep func(T) T) map[string]*T {
	if m == nil {
		return nil
	}
	out := make(map[string]*T, len(m))
	for k, v := range m {
		if v == nil {
			out[k] = nil
			continue
		}
		n := deep(*v)
		out[k] = &n
	}
	return out
}

// cloneExits copies exits and their traps.
func cloneExits(exits []Exit) []Exit {
	out := slices.Clone(exits)
	for i := range out {
		if out[i].Trap != nil {
			t := *out[i].Trap
			out[i].Trap = &t
		}
	}
	return out
}
