package hub

import (
	"regexp"

	"tavern/internal/engine"
)

// NPC health in words (PROTOCOL.md "Table owners", npc_hp "words"): at
// such a table no NPC number reaches a player or spectator. The stored
// events keep the numbers (the operator's views show them); what leaves
// for players is redacted here, in one place: the snapshot (snapshotWords)
// and every event frame, live or replayed (access.redact).

// npcNames is the set of the names of st's NPCs: damage and heal events
// name their target.
func npcNames(st *engine.State) map[string]bool {
	out := make(map[string]bool, len(st.World.NPCs))
	for _, n := range st.World.NPCs {
		out[n.Name] = true
	}
	return out
}

// redact returns e as players may see it at this table: e itself unless
// the table is in words mode and e carries an NPC's numbers. A target
// named like an NPC counts as one (a PC of the same name loses its
// numbers in the log, never an NPC its secret).
func (a *access) redact(e engine.Event) (engine.Event, bool) {
	if !a.words {
		return e, false
	}
	switch d := e.Data.(type) {
	case engine.DamageData:
		if a.npcByName[d.Target] {
			e.Data = engine.NPCDamageData{Amount: d.Amount, Health: engine.HealthWord(d.HP, d.MaxHP), Target: d.Target}
			return e, true
		}
	case engine.HealData:
		if a.npcByName[d.Target] {
			e.Data = engine.NPCHealData{Amount: d.Amount, Health: engine.HealthWord(d.HP, d.MaxHP), Target: d.Target}
			return e, true
		}
	case engine.NarrationData:
		// The offline narrator writes words at such a table; a model is
		// told to (agent.NPCHealthWords). Should one write hit points all
		// the same, they are cut from what players read.
		if text := hpNumbers.ReplaceAllString(d.Text, ""); text != d.Text {
			d.Text = text
			e.Data = d
			return e, true
		}
	case engine.TurnData:
		if d.Entry.Kind == engine.KindNPC {
			d.Entry = entryWords(d.Entry)
			e.Data = d
			return e, true
		}
	}
	return e, false
}

// hpNumbers matches hit points written out in a narration: "(4/14 HP)",
// "4/14 HP", "4 HP", "4 hit points".
var hpNumbers = regexp.MustCompile(`\s*\(\s*\d+\s*/\s*\d+(?:\s*HP)?\s*\)|\b\d+\s*/\s*\d+\s*HP\b|\b\d+\s*(?:HP|hit points?)\b`)

// redactAll redacts evs (access.redact), copying the slice only when an
// event changes.
func (a *access) redactAll(evs []engine.Event) []engine.Event {
	if !a.words {
		return evs
	}
	var out []engine.Event
	for i, e := range evs {
		r, changed := a.redact(e)
		if changed && out == nil {
			out = append(make([]engine.Event, 0, len(evs)), evs[:i]...)
		}
		if out != nil {
			out = append(out, r)
		}
	}
	if out == nil {
		return evs
	}
	return out
}

// entryWords is an NPC's initiative entry with its health in a word.
func entryWords(e engine.InitiativeEntry) engine.InitiativeEntry {
	if e.Kind != engine.KindNPC || e.HP == nil {
		return e
	}
	e.Health, e.HP, e.MaxHP = healthWord(e.HP, e.MaxHP), nil, nil
	return e
}

// healthWord is the word of hp out of maxHP (nil: hp is the most), for
// the NPCs' panel and the initiative order alike.
func healthWord(hp, maxHP *int) string {
	most := *hp
	if maxHP != nil {
		most = *maxHP
	}
	return engine.HealthWord(*hp, most)
}

// snapshotWords redacts s, a snapshot of a table in words mode: the
// NPCs, the initiative order and the recent events.
func (a *access) snapshotWords(s *Snapshot) {
	if !a.words {
		return
	}
	npcs := make([]NPC, len(s.NPCs))
	for i, n := range s.NPCs {
		if n.HP != nil {
			n.Health, n.HP, n.MaxHP = healthWord(n.HP, n.MaxHP), nil, nil
		}
		npcs[i] = n
	}
	s.NPCs = npcs
	if s.Combat != nil {
		c := *s.Combat
		c.Initiative = make([]engine.InitiativeEntry, len(s.Combat.Initiative))
		for i, e := range s.Combat.Initiative {
			c.Initiative[i] = entryWords(e)
		}
		s.Combat = &c
	}
	s.Recent = a.redactAll(s.Recent)
}
