package agent

import (
	"strconv"

	"tavern/internal/jsonstr"
)

// The turn message's <context> block, written by hand: every turn writes
// one, and encoding/json's reflection made it the largest cost of a turn
// after the model's. Each append writes exactly what json.Marshal writes
// for the value (field order, omitempty, null for a nil slice, HTML-safe
// escapes): TestTurnContextJSON compares them on every field, so a field
// added to one of these types and not here fails it.

// appendJSON appends c as json.Marshal would write it.
func (c *TurnContext) appendJSON(b []byte) []byte {
	b = append(b, `{"turn":`...)
	b = strconv.AppendInt(b, int64(c.Turn), 10)
	b = appendField(b, "kind", c.Kind)
	b = appendField(b, "mode", c.Mode)
	b = appendField(b, "combat_mode", c.CombatMode)
	b = appendField(b, "ruleset", c.Ruleset)
	b = appendField(b, "start_location", c.Start)
	if a := c.Actor; a != nil {
		b = append(b, `,"actor":{"id":`...)
		b = jsonstr.Append(b, a.ID)
		b = appendField(b, "name", a.Name)
		b = appendField(b, "seat", a.Seat)
		b = appendField(b, "class", a.Class)
		b = append(b, '}')
	}
	if c.Location != nil {
		b = append(b, `,"location":`...)
		b = c.Location.appendJSON(b)
	}
	b = append(b, `,"party":`...)
	b = appendList(b, c.Party, PartyMember.appendJSON)
	if c.LastCombat != nil {
		// An engine type, in one turn after each fight: not worth a copy
		// of its encoding here.
		b = append(b, `,"last_combat_result":`...)
		b = append(b, mustJSON(c.LastCombat)...)
	}
	if c.Combat != nil {
		b = append(b, `,"combat":`...)
		b = c.Combat.appendJSON(b)
	}
	if c.NPC != nil {
		b = append(b, `,"npc_profile":`...)
		b = c.NPC.appendJSON(b)
	}
	return append(b, '}')
}

func (l *LocationView) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, l.ID)
	b = appendField(b, "name", l.Name)
	b = appendField(b, "description", l.Description)
	b = append(b, `,"exits":`...)
	b = appendList(b, l.Exits, ExitView.appendJSON)
	b = append(b, `,"npcs":`...)
	b = appendList(b, l.NPCs, NPCBrief.appendJSON)
	b = append(b, `,"items":`...)
	b = appendList(b, l.Items, ItemRef.appendJSON)
	return append(b, '}')
}

func (e ExitView) appendJSON(b []byte) []byte {
	b = append(b, `{"to":`...)
	b = jsonstr.Append(b, e.To)
	b = appendField(b, "name", e.Name)
	b = appendField(b, "destination", e.Dest)
	return append(b, '}')
}

func (n NPCBrief) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, n.ID)
	b = appendField(b, "name", n.Name)
	b = appendField(b, "kind", n.Kind)
	b = append(b, `,"hostile":`...)
	b = strconv.AppendBool(b, n.Hostile)
	b = appendField(b, "behavior", n.Behavior)
	b = appendStatuses(b, n.Statuses)
	return append(b, '}')
}

func (it ItemRef) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, it.ID)
	b = appendField(b, "name", it.Name)
	return append(b, '}')
}

func (p PartyMember) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, p.ID)
	b = appendField(b, "name", p.Name)
	b = appendField(b, "class", p.Class)
	b = appendField(b, "seat", p.Seat)
	b = appendInt(b, "level", p.Level)
	b = appendInt(b, "hp", p.HP)
	b = appendInt(b, "max_hp", p.MaxHP)
	b = appendInt(b, "gold", p.Gold)
	b = appendField(b, "weapon", p.Weapon)
	b = appendField(b, "armour", p.Armour)
	b = appendStatuses(b, p.Statuses)
	b = append(b, `,"items":`...)
	b = appendList(b, p.Items, ItemRef.appendJSON)
	return append(b, '}')
}

func (v *CombatView) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, v.ID)
	b = appendField(b, "location", v.Location)
	b = appendInt(b, "round", v.Round)
	b = appendField(b, "active", v.Active)
	if v.Ending != "" {
		b = appendField(b, "ending", v.Ending)
	}
	b = append(b, `,"combatants":`...)
	b = appendList(b, v.Combatants, CombatantView.appendJSON)
	b = append(b, `,"recent_log":`...)
	b = appendList(b, v.RecentLog, stringJSON)
	return append(b, '}')
}

func (c CombatantView) appendJSON(b []byte) []byte {
	b = append(b, `{"entry":`...)
	b = jsonstr.Append(b, c.Entry)
	b = appendField(b, "name", c.Name)
	b = appendField(b, "kind", c.Kind)
	b = appendField(b, "side", c.Side)
	b = appendInt(b, "initiative", c.Initiative)
	b = appendInt(b, "hp", c.HP)
	b = appendInt(b, "max_hp", c.MaxHP)
	b = appendField(b, "weapon", c.Weapon)
	if c.Ranged {
		b = append(b, `,"ranged":true`...)
	}
	b = appendStatuses(b, c.Statuses)
	b = append(b, `,"can_act":`...)
	b = strconv.AppendBool(b, c.CanAct)
	return append(b, '}')
}

func (p *NPCProfile) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, p.ID)
	b = appendField(b, "name", p.Name)
	b = appendField(b, "kind", p.Kind)
	b = appendInt(b, "hp", p.HP)
	b = appendInt(b, "max_hp", p.MaxHP)
	b = appendField(b, "armour", p.Armour)
	b = appendInt(b, "armour_value", p.Defence)
	b = appendField(b, "weapon", p.Weapon)
	b = appendField(b, "personality", p.Personality)
	b = appendField(b, "tactics", p.Tactics)
	if p.Secret != "" {
		b = appendField(b, "secret", p.Secret)
	}
	b = append(b, `,"items":`...)
	b = appendList(b, p.Items, ItemRef.appendJSON)
	return append(b, '}')
}

// appendField appends `,"name":` and s; names here need no escapes.
func appendField(b []byte, name, s string) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonstr.Append(b, s)
}

func appendInt(b []byte, name string, n int) []byte {
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(n), 10)
}

// appendStatuses appends the omitempty field statuses.
func appendStatuses(b []byte, statuses []string) []byte {
	if len(statuses) == 0 {
		return b
	}
	b = append(b, `,"statuses":`...)
	return appendList(b, statuses, stringJSON)
}

// appendList appends a JSON array of list, or null for a nil one.
func appendList[T any](b []byte, list []T, appendOne func(T, []byte) []byte) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendOne(v, b)
	}
	return append(b, ']')
}

// stringJSON is jsonstr.Append in the argument order of appendList.
func stringJSON(s string, b []byte) []byte { return jsonstr.Append(b, s) }
