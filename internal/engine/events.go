package engine

import (
	"encoding/json"
	"time"
)

// Event is one table event (PROTOCOL.md "Event"). The engine creates events
// with only Kind and Data, through the constructors below; the hub numbers
// them (Seq, one more per event per table), stamps TS and Turn, stores and
// broadcasts them. Data holds the protocol fields of the kind.
//
// Data is a map so that the JSON on the wire is exactly the protocol's
// (json.Marshal sorts map keys). A map built here holds Go values (ints,
// []string, InitiativeEntry); one decoded from the store or the wire holds
// JSON values (float64, []any, map[string]any). Readers that need a typed
// payload use Decode, which reads both the same way.
type Event struct {
	Seq  int64          `json:"seq"`
	TS   time.Time      `json:"ts"`
	Kind string         `json:"kind"`
	Turn string         `json:"turn,omitempty"`
	Data map[string]any `json:"data"`
}

// Event kinds: PROTOCOL.md's "Event" table, plus combatant_joined (an NPC
// added to a running fight).
const (
	EventPlayerJoined    = "player_joined"
	EventPlayerLeft      = "player_left"
	EventAction          = "action"
	EventChat            = "chat"
	EventNarration       = "narration"
	EventDice            = "dice"
	EventDamage          = "damage"
	EventHeal            = "heal"
	EventStatus          = "status"
	EventCombatStarted   = "combat_started"
	EventCombatantJoined = "combatant_joined"
	EventTurn            = "turn"
	EventCombatEnded     = "combat_ended"
	EventMode            = "mode"
	EventWorld           = "world"
	EventSystem          = "system"
)

// Decode reads the event's data into v (a pointer to a payload struct such
// as TurnData) through JSON, so it gives the same result for an event built
// in memory and one that went through JSON (the store, the wire).
func (e Event) Decode(v any) error {
	b, err := json.Marshal(e.Data)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// InitiativeEntry is PROTOCOL.md's InitiativeEntry: one place in the
// initiative order as clients see it.
type InitiativeEntry struct {
	ID         string   `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Initiative *int     `json:"initiative,omitempty"`
	HP         *int     `json:"hp,omitempty"`
	MaxHP      *int     `json:"max_hp,omitempty"`
	Statuses   []string `json:"statuses,omitempty"`
}

// TurnData is the payload of a `turn` event, for readers (Decode).
type TurnData struct {
	Round int             `json:"round"`
	Index int             `json:"index"`
	Entry InitiativeEntry `json:"entry"`
	// Resolution is the outcome of a forced resolution turn, "" otherwise.
	Resolution string `json:"resolution,omitempty"`
	// Deadline (RFC 3339) is when a waiting PC's turn times out.
	Deadline string `json:"deadline,omitempty"`
}

func event(kind string, data map[string]any) Event { return Event{Kind: kind, Data: data} }

// --- the table: seats, actions, chat, the DM's words ---

// PlayerJoinedEvent is p taking seat with character c; role is the
// protocol's role label ("player").
func PlayerJoinedEvent(p Player, seat, role string, c *Character) Event {
	return event(EventPlayerJoined, map[string]any{"player_id": p.ID, "name": p.Name, "seat": seat, "role": role,
		"character_id": c.ID, "character": c.Name})
}

// PlayerLeftEvent is p leaving seat.
func PlayerLeftEvent(p Player, seat, role string) Event {
	return event(EventPlayerLeft, map[string]any{"player_id": p.ID, "name": p.Name, "seat": seat, "role": role})
}

// ActionEvent is a player's acknowledged action, played by the character
// named character.
func ActionEvent(a PendingAction, character string) Event {
	return event(EventAction, map[string]any{"player_id": a.PlayerID, "character_id": a.CharacterID, "text": a.Text,
		"action_id": a.ID, "name": character})
}

// ChatEvent is p's out-of-character table chat.
func ChatEvent(p Player, text string) Event {
	return event(EventChat, map[string]any{"player_id": p.ID, "name": p.Name, "text": text})
}

// NarrationEvent is the final text of a DM turn by agent (AgentNarrative or
// AgentCombat); hints appear only when there are some.
func NarrationEvent(agent, text string, hints []string) Event {
	d := map[string]any{"agent": agent, "text": text}
	if len(hints) > 0 {
		d["hints"] = hints
	}
	return event(EventNarration, d)
}

// SystemEvent is a notice from the server (the DM is unavailable, a turn
// timed out…).
func SystemEvent(code, message string) Event {
	return event(EventSystem, map[string]any{"code": code, "message": message})
}

// ModeEvent is the table switching to mode (ModeNarrative or ModeCombat).
func ModeEvent(mode string) Event { return event(EventMode, map[string]any{"mode": mode}) }

// --- dice, hit points, statuses ---

// DiceEvent is one recorded roll.
// The keep notation's kept die, an attack's target number and its outcome
// appear only when set.
func DiceEvent(r Roll) Event {
	d := map[string]any{"roller": r.Roller, "purpose": r.Purpose, "notation": r.Notation,
		"rolls": r.Rolls, "modifier": r.Modifier, "total": r.Total}
	if r.Kept != 0 {
		d["kept"] = r.Kept
	}
	if r.Outcome != "" {
		d["against"] = r.Against
		d["outcome"] = r.Outcome
	}
	return event(EventDice, d)
}

// DamageEvent is target losing amount HP, down to hp of maxHP.
func DamageEvent(target string, amount, hp, maxHP int) Event {
	return event(EventDamage, map[string]any{"target": target, "amount": amount, "hp": hp, "max_hp": maxHP})
}

// HealEvent is target regaining amount HP, up to hp of maxHP.
func HealEvent(target string, amount, hp, maxHP int) Event {
	return event(EventHeal, map[string]any{"target": target, "amount": amount, "hp": hp, "max_hp": maxHP})
}

// StatusAddedEvent is target gaining statuses.
func StatusAddedEvent(target string, statuses ...string) Event {
	return event(EventStatus, map[string]any{"target": target, "added": statuses})
}

// StatusRemovedEvent is target losing statuses.
func StatusRemovedEvent(target string, statuses ...string) Event {
	return event(EventStatus, map[string]any{"target": target, "removed": statuses})
}

// EffectEvent is target gaining the status of an effect for rounds rounds.
func EffectEvent(target, effect string, rounds int) Event {
	return event(EventStatus, map[string]any{"target": target, "added": []string{effect}, "rounds": rounds})
}

// TurnSkippedEvent is target losing its turn to reason (an effect).
func TurnSkippedEvent(target, reason string) Event {
	return event(EventStatus, map[string]any{"target": target, "skipped_turn": true, "reason": reason})
}

// --- combat ---

// CombatStartedEvent is the start of cb with its initiative order (the
// bookend without an initiative number).
func CombatStartedEvent(cb *Combat) Event {
	// Maps, not InitiativeEntry: this payload has always been written with
	// sorted keys and no HP, and the wire stays byte for byte the same.
	var order []map[string]any
	for _, e := range cb.Order {
		m := map[string]any{"id": e.Entry, "name": e.Name, "kind": e.Kind}
		if e.Kind != KindBookend {
			m["initiative"] = e.Initiative
		}
		order = append(order, m)
	}
	return event(EventCombatStarted, map[string]any{"combat_id": cb.ID, "location": cb.Location, "initiative": order})
}

// CombatantJoinedEvent is e added to a running fight.
func CombatantJoinedEvent(e Combatant) Event {
	return event(EventCombatantJoined, map[string]any{"entry": e.Entry, "name": e.Name, "initiative": e.Initiative})
}

// TurnEvent is the turn passing to entry, at index of the order in round.
func TurnEvent(round, index int, entry InitiativeEntry) Event {
	return event(EventTurn, map[string]any{"round": round, "index": index, "entry": entry})
}

// ResolutionTurnEvent is the DM's forced resolution turn once an end
// condition (outcome) holds.
func ResolutionTurnEvent(round, index int, outcome string) Event {
	return event(EventTurn, map[string]any{"round": round, "index": index,
		"entry": InitiativeEntry{ID: BookendEntry, Name: "DM", Kind: KindBookend}, "resolution": outcome})
}

// CombatEndedEvent is the end of a fight with its rewards.
// Who got what (shares), who missed out and the level-ups appear only
// when there are some.
func CombatEndedEvent(res CombatResult) Event {
	rw := map[string]any{"xp": res.XP, "gold": res.Gold, "loot": res.Loot}
	if len(res.Shares) > 0 {
		rw["shares"] = res.Shares
	}
	if len(res.Missed) > 0 {
		rw["missed"] = res.Missed
	}
	if len(res.LevelUps) > 0 {
		rw["level_ups"] = res.LevelUps
	}
	return event(EventCombatEnded, map[string]any{"combat_id": res.CombatID, "outcome": res.Outcome, "rewards": rw})
}

// --- the world (kind `world`: one key says what changed) ---

// PartyAtEvent is the party set down at location (after a fight).
func PartyAtEvent(location string) Event {
	return event(EventWorld, map[string]any{"location": location})
}

// PartyMovedEvent is the party travelling to l.
func PartyMovedEvent(l *Location) Event {
	return event(EventWorld, map[string]any{"location": l.ID, "name": l.Name})
}

// ItemAddedEvent is it coming into the character's inventory.
func ItemAddedEvent(characterID string, it *Item) Event {
	return inventoryEvent(characterID, "added", it)
}

// ItemRemovedEvent is it leaving the character's inventory.
func ItemRemovedEvent(characterID string, it *Item) Event {
	return inventoryEvent(characterID, "removed", it)
}

func inventoryEvent(characterID, change string, it *Item) Event {
	return event(EventWorld, map[string]any{"inventory": map[string]any{"character_id": characterID, change: it.Name, "item_id": it.ID}})
}

// EquippedEvent is a character equipping it in slot ("weapon", "armour").
func EquippedEvent(characterID string, it *Item, slot string) Event {
	return event(EventWorld, map[string]any{"equipped": map[string]any{"character_id": characterID, "item": it.Name, "item_id": it.ID, "slot": slot}})
}

// GoldEvent is a character's gold changing by change to gold.
func GoldEvent(characterID string, change, gold int, reason string) Event {
	return event(EventWorld, map[string]any{"gold": map[string]any{"character_id": characterID, "change": change, "gold": gold, "reason": reason}})
}

// XPEvent is c gaining gain XP (c holds its new XP and level).
func XPEvent(c *Character, gain int) Event {
	return event(EventWorld, map[string]any{"xp": map[string]any{"character_id": c.ID, "gain": gain, "xp": c.XP, "level": c.Level}})
}

// RelationshipEvent is the relationship between the beings named a and b
// becoming value.
func RelationshipEvent(a, b string, value int) Event {
	return event(EventWorld, map[string]any{"relationship": map[string]any{"a": a, "b": b, "value": value}})
}

// NPCMovedEvent is the NPC named name going to l.
func NPCMovedEvent(name string, l *Location) Event {
	return event(EventWorld, map[string]any{"npc": name, "npc_location": l.ID, "location_name": l.Name})
}

// NPCCreatedEvent is n appearing in the world.
func NPCCreatedEvent(n *NPC) Event {
	return event(EventWorld, map[string]any{"npc": n.Name, "npc_location": n.Location, "created": true})
}

// NPCBehaviorEvent is n's behaviour changing.
func NPCBehaviorEvent(n *NPC) Event {
	return event(EventWorld, map[string]any{"npc": n.Name, "behavior": n.Behavior})
}

// QuestEvent is q offered or changing status.
func QuestEvent(q *Quest) Event {
	return event(EventWorld, map[string]any{"quest": map[string]any{"id": q.ID, "name": q.Name, "status": q.Status}})
}

// LocationCreatedEvent is l added to the world.
func LocationCreatedEvent(l *Location) Event {
	return event(EventWorld, map[string]any{"new_location": l.ID, "name": l.Name})
}
