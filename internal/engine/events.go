package engine

import (
	"encoding/json"
	"fmt"
	"time"
)

// Event is one table event (PROTOCOL.md "Event"). The engine builds events
// from a payload through the constructors below; the hub numbers them (Seq,
// one more per event per table), stamps TS and Turn, stores and broadcasts
// them. An event's payload is a value and is never changed once built: a
// caller that needs other data builds a new event.
//
// Data is one of the payload structs below (TurnData, NarrationData…), the
// same type whether the event was built in memory or decoded from the
// store or the wire (DecodeData). Its JSON is the protocol's: the fields
// of the payloads that the protocol writes as objects with sorted keys are
// declared in that order, so encoding/json writes the same bytes.
type Event struct {
	Seq  int64     `json:"seq"`
	TS   time.Time `json:"ts"`
	Kind Kind      `json:"kind"`
	Turn string    `json:"turn,omitempty"`
	Data Payload   `json:"data"`
}

// Kind is an event's kind (PROTOCOL.md "Event").
type Kind string

// Event kinds: PROTOCOL.md's "Event" table, plus combatant_joined (an NPC
// added to a running fight).
const (
	EventPlayerJoined    Kind = "player_joined"
	EventPlayerLeft      Kind = "player_left"
	EventAction          Kind = "action"
	EventChat            Kind = "chat"
	EventNarration       Kind = "narration"
	EventDice            Kind = "dice"
	EventDamage          Kind = "damage"
	EventHeal            Kind = "heal"
	EventStatus          Kind = "status"
	EventCombatStarted   Kind = "combat_started"
	EventCombatantJoined Kind = "combatant_joined"
	EventTurn            Kind = "turn"
	EventCombatEnded     Kind = "combat_ended"
	EventMode            Kind = "mode"
	EventWorld           Kind = "world"
	EventSystem          Kind = "system"
	EventAbility         Kind = "ability"
)

// Payload is the data of an event of one kind. The payload types are the
// structs of this file whose names end in Data, and RawData.
type Payload interface {
	// EventKind is the kind of the events that carry this payload.
	EventKind() Kind
}

// NewEvent is the event carrying p.
func NewEvent(p Payload) Event { return Event{Kind: p.EventKind(), Data: p} }

// RawData is the payload of an event of a kind this package does not know
// (an old or a test event), kept as the JSON it came as.
type RawData json.RawMessage

// EventKind is "": RawData belongs to no kind.
func (RawData) EventKind() Kind { return "" }

// MarshalJSON writes the data as it came ("null" when empty).
func (r RawData) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of b.
func (r *RawData) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// DecodeData reads the JSON data of an event of kind into its payload
// type. Data of an unknown kind, or JSON null, is kept as RawData.
func DecodeData(kind Kind, data []byte) (Payload, error) {
	if len(data) == 0 || string(data) == "null" {
		return RawData(nil), nil
	}
	decode := decoders[kind]
	if kind == EventWorld {
		decode = worldDecoder(data)
	}
	if decode == nil {
		return RawData(append([]byte(nil), data...)), nil
	}
	p, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode %s data: %w", kind, err)
	}
	return p, nil
}

// decoders reads the data of each kind but `world` (worldDecoder).
var decoders = map[Kind]func([]byte) (Payload, error){
	EventPlayerJoined:    decodeAs[PlayerJoinedData],
	EventPlayerLeft:      decodeAs[PlayerLeftData],
	EventAction:          decodeAs[ActionData],
	EventChat:            decodeAs[ChatData],
	EventNarration:       decodeAs[NarrationData],
	EventSystem:          decodeAs[SystemData],
	EventMode:            decodeAs[ModeData],
	EventDice:            decodeAs[DiceData],
	EventDamage:          decodeAs[DamageData],
	EventHeal:            decodeAs[HealData],
	EventStatus:          decodeAs[StatusData],
	EventCombatStarted:   decodeAs[CombatStartedData],
	EventCombatantJoined: decodeAs[CombatantJoinedData],
	EventTurn:            decodeAs[TurnData],
	EventCombatEnded:     decodeAs[CombatEndedData],
	EventAbility:         decodeAs[AbilityData],
	EventNote:            decodeAs[NoteData],
	EventNoteRemoved:     decodeAs[NoteRemovedData],
	EventEdit:            decodeAs[EditData],
	EventRetcon:          decodeAs[RetconData],
}

func decodeAs[T Payload](data []byte) (Payload, error) {
	var d T
	err := json.Unmarshal(data, &d)
	return d, err
}

// UnmarshalJSON decodes an event, its data into the payload of its kind.
func (e *Event) UnmarshalJSON(b []byte) error {
	var w struct {
		Seq  int64           `json:"seq"`
		TS   time.Time       `json:"ts"`
		Kind Kind            `json:"kind"`
		Turn string          `json:"turn"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d, err := DecodeData(w.Kind, w.Data)
	if err != nil {
		return err
	}
	*e = Event{Seq: w.Seq, TS: w.TS, Kind: w.Kind, Turn: w.Turn, Data: d}
	return nil
}

// InitiativeEntry is PROTOCOL.md's InitiativeEntry: one place in the
// initiative order as clients see it.
type InitiativeEntry struct {
	ID         EntryID  `json:"id"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Initiative *int     `json:"initiative,omitempty"`
	HP         *int     `json:"hp,omitempty"`
	MaxHP      *int     `json:"max_hp,omitempty"`
	Statuses   []string `json:"statuses,omitempty"`
	// Health replaces HP and MaxHP of an NPC where players may not see
	// its numbers (Config.Words).
	Health string `json:"health,omitempty"`
}

// --- the table: seats, actions, chat, the DM's words ---

// PlayerJoinedData is the payload of `player_joined`.
type PlayerJoinedData struct {
	Character   string `json:"character"`
	CharacterID string `json:"character_id"`
	Name        string `json:"name"`
	PlayerID    string `json:"player_id"`
	Role        string `json:"role"`
	Seat        string `json:"seat"`
}

// PlayerLeftData is the payload of `player_left`.
type PlayerLeftData struct {
	// By says who freed the seat when it was not its player: "owner" or
	// "operator".
	By       string `json:"by,omitempty"`
	Name     string `json:"name"`
	PlayerID string `json:"player_id"`
	Role     string `json:"role"`
	Seat     string `json:"seat"`
}

// ActionData is the payload of `action`.
type ActionData struct {
	ActionID    string `json:"action_id"`
	CharacterID string `json:"character_id"`
	// Name is the acting character's name.
	Name     string `json:"name"`
	PlayerID string `json:"player_id"`
	Text     string `json:"text"`
}

// ChatData is the payload of `chat`.
type ChatData struct {
	Name     string `json:"name"`
	PlayerID string `json:"player_id"`
	Text     string `json:"text"`
}

// NarrationData is the payload of `narration`.
type NarrationData struct {
	// ActionID is the action the narration resolves, so that a client
	// among several players can match its own; "" for other turns.
	ActionID string   `json:"action_id,omitempty"`
	Agent    string   `json:"agent"`
	Hints    []string `json:"hints,omitempty"`
	Text     string   `json:"text"`
}

// SystemData is the payload of `system`: a notice from the server. The
// fields after Code and Message are set by some codes only.
type SystemData struct {
	// Action is the operator's moderation action.
	Action   string `json:"action,omitempty"`
	ActionID string `json:"action_id,omitempty"`
	// Attempts is how many times the DM has tried the turn.
	Attempts int `json:"attempts,omitempty"`
	// By says who moderated: "owner" for a table's owner; for the
	// operator, the console user's name, or "root" for the root token.
	By      string `json:"by,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// Outcome is the end of a fight the notice cuts short.
	Outcome  Outcome `json:"outcome,omitempty"`
	PlayerID string  `json:"player_id,omitempty"`
}

// ModeData is the payload of `mode`.
type ModeData struct {
	Mode string `json:"mode"`
}

func (PlayerJoinedData) EventKind() Kind { return EventPlayerJoined }
func (PlayerLeftData) EventKind() Kind   { return EventPlayerLeft }
func (ActionData) EventKind() Kind       { return EventAction }
func (ChatData) EventKind() Kind         { return EventChat }
func (NarrationData) EventKind() Kind    { return EventNarration }
func (SystemData) EventKind() Kind       { return EventSystem }
func (ModeData) EventKind() Kind         { return EventMode }

// PlayerJoinedEvent is p taking seat with character c; role is the
// protocol's role label ("player").
func PlayerJoinedEvent(p Player, seat, role string, c *Character) Event {
	return NewEvent(PlayerJoinedData{PlayerID: p.ID, Name: p.Name, Seat: seat, Role: role, CharacterID: c.ID, Character: c.Name})
}

// PlayerLeftEvent is p leaving seat.
func PlayerLeftEvent(p Player, seat, role string) Event {
	return NewEvent(PlayerLeftData{PlayerID: p.ID, Name: p.Name, Seat: seat, Role: role})
}

// ActionEvent is a player's acknowledged action, played by the character
// named character.
func ActionEvent(a PendingAction, character string) Event {
	return NewEvent(ActionData{PlayerID: a.PlayerID, CharacterID: a.CharacterID, Text: a.Text, ActionID: a.ID, Name: character})
}

// ChatEvent is p's out-of-character table chat.
func ChatEvent(p Player, text string) Event {
	return NewEvent(ChatData{PlayerID: p.ID, Name: p.Name, Text: text})
}

// NarrationEvent is the final text of a DM turn by agent (AgentNarrative or
// AgentCombat) resolving the action actionID ("" for none); hints appear
// only when there are some.
func NarrationEvent(agent, text string, hints []string, actionID string) Event {
	if len(hints) == 0 {
		hints = nil
	}
	return NewEvent(NarrationData{ActionID: actionID, Agent: agent, Text: text, Hints: hints})
}

// SystemEvent is a notice from the server (the DM is unavailable, a turn
// timed out…) with no more than its code and message.
func SystemEvent(code, message string) Event {
	return NewEvent(SystemData{Code: code, Message: message})
}

// ModeEvent is the table switching to mode (ModeNarrative or ModeCombat).
func ModeEvent(mode string) Event { return NewEvent(ModeData{Mode: mode}) }

// --- dice, hit points, statuses ---

// DiceData is the payload of `dice`: one recorded roll. The keep
// notation's kept die, an attack's target number and its outcome appear
// only when set.
type DiceData struct {
	Against  *int   `json:"against,omitempty"`
	Kept     int    `json:"kept,omitempty"`
	Modifier int    `json:"modifier"`
	Notation string `json:"notation"`
	Outcome  string `json:"outcome,omitempty"`
	Purpose  string `json:"purpose"`
	Roller   string `json:"roller"`
	Rolls    []int  `json:"rolls"`
	Total    int    `json:"total"`
}

// DamageData is the payload of `damage`: Target losing Amount HP, down to
// HP of MaxHP.
type DamageData struct {
	Amount int    `json:"amount"`
	HP     int    `json:"hp"`
	MaxHP  int    `json:"max_hp"`
	Target string `json:"target"`
}

// HealData is the payload of `heal`: Target regaining Amount HP, up to HP
// of MaxHP.
type HealData DamageData

// StatusData is the payload of `status`: statuses added or removed, an
// effect's rounds, or a lost turn and its reason.
type StatusData struct {
	Added       []string `json:"added,omitempty"`
	Reason      string   `json:"reason,omitempty"`
	Removed     []string `json:"removed,omitempty"`
	Rounds      int      `json:"rounds,omitempty"`
	SkippedTurn bool     `json:"skipped_turn,omitempty"`
	Target      string   `json:"target"`
}

func (DiceData) EventKind() Kind   { return EventDice }
func (DamageData) EventKind() Kind { return EventDamage }
func (HealData) EventKind() Kind   { return EventHeal }
func (StatusData) EventKind() Kind { return EventStatus }

// DiceEvent is one recorded roll.
func DiceEvent(r Roll) Event {
	d := DiceData{Roller: r.Roller, Purpose: r.Purpose, Notation: r.Notation, Rolls: r.Rolls, Modifier: r.Modifier, Total: r.Total, Kept: r.Kept}
	if r.Outcome != "" {
		against := r.Against
		d.Against, d.Outcome = &against, r.Outcome
	}
	return NewEvent(d)
}

// DamageEvent is target losing amount HP, down to hp of maxHP.
func DamageEvent(target string, amount, hp, maxHP int) Event {
	return NewEvent(DamageData{Target: target, Amount: amount, HP: hp, MaxHP: maxHP})
}

// HealEvent is target regaining amount HP, up to hp of maxHP.
func HealEvent(target string, amount, hp, maxHP int) Event {
	return NewEvent(HealData{Target: target, Amount: amount, HP: hp, MaxHP: maxHP})
}

// StatusAddedEvent is target gaining status.
func StatusAddedEvent(target, status string) Event {
	return NewEvent(StatusData{Target: target, Added: []string{status}})
}

// StatusRemovedEvent is target losing status.
func StatusRemovedEvent(target, status string) Event {
	return NewEvent(StatusData{Target: target, Removed: []string{status}})
}

// EffectEvent is target gaining the status of an effect for rounds rounds
// (at least one).
func EffectEvent(target, effect string, rounds int) Event {
	return NewEvent(StatusData{Target: target, Added: []string{effect}, Rounds: rounds})
}

// TurnSkippedEvent is target losing its turn to reason (an effect).
func TurnSkippedEvent(target, reason string) Event {
	return NewEvent(StatusData{Target: target, SkippedTurn: true, Reason: reason})
}

// --- combat ---

// AbilityData is the payload of `ability` (PROTOCOL.md "Abilities"): Actor
// used Ability (its id) on Target, with UsesLeft uses left. Its rolls and
// what they did follow as their own events.
type AbilityData struct {
	Ability  string `json:"ability"`
	Actor    string `json:"actor"`
	Target   string `json:"target,omitempty"`
	UsesLeft int    `json:"uses_left"`
}

func (AbilityData) EventKind() Kind { return EventAbility }

// AbilityEvent is actor using ability on target ("" for none).
func AbilityEvent(actor, ability, target string, usesLeft int) Event {
	return NewEvent(AbilityData{Actor: actor, Ability: ability, Target: target, UsesLeft: usesLeft})
}

// CombatStartedData is the payload of `combat_started`.
type CombatStartedData struct {
	CombatID   string         `json:"combat_id"`
	Initiative []StartedEntry `json:"initiative"`
	Location   string         `json:"location"`
}

// StartedEntry is one place in a starting fight's order: the bookend has
// no initiative number.
type StartedEntry struct {
	ID         EntryID `json:"id"`
	Initiative *int    `json:"initiative,omitempty"`
	Kind       string  `json:"kind"`
	Name       string  `json:"name"`
}

// CombatantJoinedData is the payload of `combatant_joined`: an NPC added
// to a running fight.
type CombatantJoinedData struct {
	Entry      EntryID `json:"entry"`
	Initiative int     `json:"initiative"`
	Name       string  `json:"name"`
}

// TurnData is the payload of `turn`.
type TurnData struct {
	// Deadline (RFC 3339) is when a waiting PC's turn times out.
	Deadline string          `json:"deadline,omitempty"`
	Entry    InitiativeEntry `json:"entry"`
	Index    int             `json:"index"`
	// Resolution is the outcome of a forced resolution turn, "" otherwise.
	Resolution Outcome `json:"resolution,omitempty"`
	Round      int     `json:"round"`
}

// StartsPCTurn tells whether the turn passes to a PC (not a forced
// resolution), the turns that a timer may cut short.
func (d TurnData) StartsPCTurn() bool { return d.Resolution == "" && d.Entry.Kind == KindPC }

// CombatEndedData is the payload of `combat_ended`.
type CombatEndedData struct {
	CombatID string  `json:"combat_id"`
	Outcome  Outcome `json:"outcome"`
	Rewards  Rewards `json:"rewards"`
}

// Rewards is what a fight paid. Who got what (shares), who missed out and
// the level-ups appear only when there are some.
type Rewards struct {
	Gold     int           `json:"gold"`
	LevelUps []string      `json:"level_ups,omitempty"`
	Loot     []string      `json:"loot"`
	Missed   []string      `json:"missed,omitempty"`
	Shares   []RewardShare `json:"shares,omitempty"`
	XP       int           `json:"xp"`
}

func (CombatStartedData) EventKind() Kind   { return EventCombatStarted }
func (CombatantJoinedData) EventKind() Kind { return EventCombatantJoined }
func (TurnData) EventKind() Kind            { return EventTurn }
func (CombatEndedData) EventKind() Kind     { return EventCombatEnded }

// CombatStartedEvent is the start of cb with its initiative order.
func CombatStartedEvent(cb *Combat) Event {
	var order []StartedEntry
	for _, e := range cb.Order {
		s := StartedEntry{ID: e.Entry, Name: e.Name, Kind: e.Kind}
		if e.Kind != KindBookend {
			n := e.Initiative
			s.Initiative = &n
		}
		order = append(order, s)
	}
	return NewEvent(CombatStartedData{CombatID: cb.ID, Location: cb.Location, Initiative: order})
}

// CombatantJoinedEvent is e added to a running fight.
func CombatantJoinedEvent(e Combatant) Event {
	return NewEvent(CombatantJoinedData{Entry: e.Entry, Name: e.Name, Initiative: e.Initiative})
}

// TurnEvent is the turn passing to entry, at index of the order in round.
func TurnEvent(round, index int, entry InitiativeEntry) Event {
	return NewEvent(TurnData{Round: round, Index: index, Entry: entry})
}

// DeadlineTurnEvent is the turn of d handed to a PC who must act by
// deadline (RFC 3339).
func DeadlineTurnEvent(d TurnData, deadline string) Event {
	d.Deadline = deadline
	return NewEvent(d)
}

// ResolutionTurnEvent is the DM's forced resolution turn once an end
// condition (outcome) holds.
func ResolutionTurnEvent(round, index int, outcome Outcome) Event {
	return NewEvent(TurnData{Round: round, Index: index,
		Entry: InitiativeEntry{ID: BookendEntry, Name: "DM", Kind: KindBookend}, Resolution: outcome})
}

// CombatEndedEvent is the end of a fight with its rewards.
func CombatEndedEvent(res CombatResult) Event {
	rw := Rewards{XP: res.XP, Gold: res.Gold, Loot: res.Loot}
	if len(res.Shares) > 0 {
		rw.Shares = res.Shares
	}
	if len(res.Missed) > 0 {
		rw.Missed = res.Missed
	}
	if len(res.LevelUps) > 0 {
		rw.LevelUps = res.LevelUps
	}
	return NewEvent(CombatEndedData{CombatID: res.CombatID, Outcome: res.Outcome, Rewards: rw})
}
