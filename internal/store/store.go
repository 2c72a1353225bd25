// Package store holds the records Tavern's store keeps and its users
// exchange: a table's [Commit] (everything one step of a table writes, in
// one transaction), the [TableData] that brings a table back, the agents'
// history rows ([AgentMessage]), the archived [Memory] blocks and the
// [LLMCall] log. They are persistence and LLM bookkeeping, not rules, so
// they live here rather than in the domain package engine.
//
// The package holds types, and the encodings both stores share (times,
// JSON columns, an erased player's events: encoding.go); no I/O. Start
// with [Commit], the one write path of a running table. The interfaces
// over these records stay with the packages that use them (hub.Store,
// agent.MemoryIndex, agent.CallLog) and internal/db satisfies them.
//
// Imports point one way, toward the domain (DESIGN.md): web imports hub,
// hub imports agent, and agent, db and hub import engine; hub and db never
// import each other. store sits beside engine — it imports only engine and
// the standard library — so any of them may import it without a cycle,
// and web reads the DM's records through the hub in these types instead of
// importing agent.
package store

import (
	"encoding/json"
	"time"

	"tavern/internal/engine"
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
	// characters, game state and RNG. Once the commit is queued, State is
	// the store's: the caller must never change it, nor anything it points
	// to, again (the store keeps it to write only what the next state
	// changes), and builds the next state on a Clone.
	State  *engine.State
	Events []engine.Event
	// EventData, when not nil, holds the JSON of each event's Data, in
	// order (the hub has it already: its frames carry the same bytes);
	// nil: the store encodes the data itself.
	EventData  []json.RawMessage
	Messages   []AgentMessage
	AddSeat    *engine.Seat
	RemoveSeat string
	AddPending *engine.PendingAction
	Resolve    []string
	// Abandon closes pending actions as abandoned by the operator: they
	// are never played.
	Abandon []string
	// Archive, when not nil, is stored as a new memory of Archive.Agent
	// after the commit's messages, and the agent's active messages with
	// turns up to Archive.LastTurn move into it (ArchiveHistory's rules),
	// so a turn and the archive it makes are durable together or not at
	// all. Once the commit succeeds, *Archive holds the memory as stored
	// (ID, CreatedAt, message count, first and last turns); the caller
	// must not touch it until the commit returns.
	Archive *Memory
	// Lives record where open pending actions are in their life; a closed
	// or unknown action is left alone (after everything else of the
	// commit).
	Lives []ActionLife
	// Calls are appended to the model call log.
	Calls []LLMCall
	// Owner, when not nil, is a note, whisper, save point, retcon or
	// edit written with the rest (owner.go).
	Owner *OwnerChange
	// Paused, when not nil, sets the operator's paused mark on the table,
	// and ClosedAt marks it closed at that time (ENOTFOUND if there is no
	// such table): the operator's marks and the audit events committed
	// with them are durable together or not at all.
	Paused   *bool
	ClosedAt *time.Time
	// Settings, when not nil, changes the owner's side of the table
	// (settings, invite, bans: SettingsChange) with the commit.
	Settings *SettingsChange
	// Chain, when not zero, links the commits of one table queued with
	// the same value: once one of them fails, the later ones fail with
	// ErrChainBroken and write nothing. A caller that queues a commit
	// before the earlier ones are durable (the hub's pipelined table)
	// builds each on the ones before, so none may land without them; it
	// takes a new value, unique to the process, after a failure.
	Chain uint64
}

// ErrChainBroken fails a commit queued behind a failed commit of its chain
// (Commit.Chain): it was not applied. It is an engine EUNAVAILABLE error
// (the protocol's `unavailable`: send it again).
var ErrChainBroken = engine.Errorf(engine.EUNAVAILABLE, "An earlier change of the table was not saved; not saved either, try again.")

// ErrUnavailable fails a write the storage could not take (a full disk, an
// I/O error, a read-only file): nothing of it was applied, and a later try
// may work once the disk has room. It is an engine EUNAVAILABLE error, so
// it reaches clients as the protocol's `unavailable`.
var ErrUnavailable = engine.Errorf(engine.EUNAVAILABLE, "The server cannot save right now; try again in a moment.")

// TableInfo is what the lobby and a lazily loading hub need of a stored
// table without loading it: its settings, game mode, seats
// taken, whether it has open actions, and the operator's marks.
type TableInfo struct {
	Table   engine.Table
	Mode    string
	Seated  int
	Pending bool // an acknowledged action waits to be resolved
	Flags   TableFlags
}

// TableProgress is how far a stored table has played, for the operator's
// list of the tables that are not loaded: the turns played, the fight's
// round (nil out of a fight) and when the last turn's narration was
// stored (zero if none).
type TableProgress struct {
	Turn       int
	Round      *int
	LastTurnAt time.Time
}

// TableData is what the store returns to bring a table back to life.
type TableData struct {
	Table   engine.Table
	State   *engine.State // Catalogue not set
	Seq     int64         // last event seq, 0 if none
	Seats   []engine.Seat
	Pending []engine.PendingAction // unresolved, oldest first
	Flags   TableFlags             // the operator's marks
	// LastTurnAt is when the last turn's narration was stored (zero if
	// none), so the operator sees it after a restart too.
	LastTurnAt time.Time
	// RecentActs are the last few closed actions of each player
	// (RecentActsPerPlayer), newest first: a client that lost an ack
	// sends its act again, and the table answers it without a read.
	RecentActs []ClosedAct
}

// RecentActsPerPlayer is how many of each player's closed actions
// TableData.RecentActs holds.
const RecentActsPerPlayer = 8

// ClosedAct is an action that was resolved or abandoned: who sent it,
// under which client id, and which (ActionResolved or ActionAbandoned).
type ClosedAct struct {
	PlayerID, ClientID, State string
}

// Memory is an archived, summarised block of one agent's history at a
// table (seed 001's rolling sessions), searchable by title, summary and
// keywords. ID doubles as the session number the memory tools and the API
// use.
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

// LLMCall is one model call in the call log (DESIGN.md "Persistence": the
// log the admin side reads).
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
	// Turn is the table turn that made the call ("t12"), "" outside one.
	Turn string `json:"turn,omitempty"`
	// ErrorKind sorts a failure: CallTimeout, CallRateLimit, CallServer,
	// CallAuth, CallInvalidOutput or CallOther; "" when the call succeeded.
	ErrorKind string `json:"error_kind,omitempty"`
	// PromptVersion names the system prompt the call was made with
	// (agent.PromptVersion), "" for calls made for no agent's turn.
	PromptVersion string `json:"prompt_version,omitempty"`
}

// UsageUnknown reports a call that succeeded with no tokens counted: its
// server sent no usage (some OpenAI-compatible ones do not), so its tokens
// and cost are unknown, not zero. The offline narrator, which uses no
// model, counts none and is not unknown.
func (c LLMCall) UsageUnknown() bool {
	return c.Error == "" && c.PromptTokens == 0 && c.CompletionTokens == 0 && c.Model != "offline"
}
