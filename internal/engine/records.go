package engine

import (
	"encoding/json"
	"time"
)

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

// AgentMessage is one message of an agent's history (an OpenAI-format
// chat message, kept opaque here). Turn groups the messages of one turn so
// histories can be cut only at turn boundaries.
type AgentMessage struct {
	Agent string          `json:"agent"`
	Turn  int             `json:"turn"`
	Body  json.RawMessage `json:"body"`
}

// Commit is everything one step of a table writes, applied in ONE
// transaction: a turn's new state, events, history messages and resolved
// actions; or a seat taken or left; or a new pending action; or chat events.
type Commit struct {
	TableID string
	// State, when not nil, replaces the table's stored state: world rows,
	// characters, game state and RNG.
	State      *State
	Events     []Event
	Messages   []AgentMessage
	AddSeat    *Seat
	RemoveSeat string
	AddPending *PendingAction
	Resolve    []string
}

// TableData is what the store returns to bring a table back to life.
type TableData struct {
	Table   Table
	State   *State // Catalogue not set
	Seq     int64  // last event seq, 0 if none
	Seats   []Seat
	Pending []PendingAction // unresolved, oldest first
}

// Memory is an archived, summarised block of one agent's history at a
// table (seed 001's rolling sessions), searchable by title, summary and
// keywords.
type Memory struct {
	ID        int64     `json:"id"`
	TableID   string    `json:"table_id"`
	Agent     string    `json:"agent"`
	FirstTurn int       `json:"first_turn"`
	LastTurn  int       `json:"last_turn"`
	Messages  int       `json:"messages"`
	Title     string    `json:"title"`
	Summary   string    `json:"summary"`
	Keywords  []string  `json:"keywords"`
	Source    string    `json:"source"` // the summary model, or "extractive"
	CreatedAt time.Time `json:"created_at"`
}

// LLMCall is one model call in the call log.
type LLMCall struct {
	ID               int64         `json:"id"`
	TableID          string        `json:"table_id"`
	Agent            string        `json:"agent"`
	Model            string        `json:"model"`
	Started          time.Time     `json:"started_at"`
	Latency          time.Duration `json:"-"`
	LatencyMS        int64         `json:"latency_ms"`
	PromptTokens     int           `json:"prompt_tokens"`
	CompletionTokens int           `json:"completion_tokens"`
	CachedTokens     int           `json:"cached_tokens"`
	CostUSD          float64       `json:"cost_usd"`
	Error            string        `json:"error,omitempty"`
}
