package engine

import "time"

// Player is an identity: a display name and a secret token (only its hash
// is stored).
type Player struct {
	ID        string    `json:"player_id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Table is a table's settings, as stored.
type Table struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Adventure string    `json:"adventure"`
	Config    Config    `json:"config"`
	Seats     int       `json:"seats"`
	OwnerID   string    `json:"owner_id"`
	CreatedAt time.Time `json:"created_at"`
	// Private tables are hidden from everyone but their owner, their
	// seated players and who holds the invite (PROTOCOL.md "Table owners").
	Private bool `json:"private,omitempty"`
}

// Seat binds a player to a character at a table.
type Seat struct {
	Seat        string    `json:"seat"`
	PlayerID    string    `json:"player_id"`
	PlayerName  string    `json:"name"`
	CharacterID string    `json:"character_id"`
	JoinedAt    time.Time `json:"joined_at"`
}

// Pending action statuses.
const (
	ActionPending  = "pending"
	ActionResolved = "resolved"
)

// PendingAction is a player's acknowledged action, written durably before
// the ack and resolved in the same transaction as the turn that played it.
type PendingAction struct {
	ID          string    `json:"id"`
	PlayerID    string    `json:"player_id"`
	CharacterID string    `json:"character_id"`
	Seat        string    `json:"seat"`
	ClientID    string    `json:"client_id"`
	Text        string    `json:"text"`
	Status      string    `json:"status"`
	CreatedAt   time.Time `json:"created_at"`
	// Kind is "" for a player's act, ActionStart for a session start.
	Kind string `json:"kind,omitempty"`
}

// ActionStart is the kind of a session-start pending action: the DM reads
// the character's backstory and brings it to life.
const ActionStart = "start"

// Agent names (the two histories of a table).
const (
	AgentNarrative = "narrative"
	AgentCombat    = "combat"
)
