package store

import (
	"encoding/json"
	"time"

	"tavern/internal/engine"
)

// Note is one of a table's notes: a fact the table established that the
// DM must honour (PROTOCOL.md "Undo, notes and the owner's word to the
// DM"). By is the author's player id, ByName their name then.
type Note struct {
	ID        string    `json:"id"`
	Text      string    `json:"text"`
	By        string    `json:"by"`
	ByName    string    `json:"by_name"`
	CreatedAt time.Time `json:"created_at"`
}

// MaxNotes is how many notes a table may hold.
const MaxNotes = 30

// Whisper is the owner's private instruction to the DM, waiting for the
// next turn that reads it.
type Whisper struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	By        string    `json:"by"`
	CreatedAt time.Time `json:"created_at"`
	// UsedTurn is the turn that read it; 0 while it waits.
	UsedTurn int `json:"used_turn,omitempty"`
}

// Feedback is a seated player's score of one narration (event Seq): 1 or
// -1, the last one a player gives counting.
type Feedback struct {
	TableID  string    `json:"table_id"`
	Seq      int64     `json:"seq"`
	PlayerID string    `json:"player_id"`
	Score    int       `json:"score"`
	Comment  string    `json:"comment,omitempty"`
	At       time.Time `json:"at"`
	// Turn and Agent find the model call that made the narration, stored
	// with the score: the turn's last successful call of that agent.
	Turn  string `json:"turn"`
	Agent string `json:"agent"`
}

// FeedbackGroup is the players' scores of the narrations of one model and
// prompt version.
type FeedbackGroup struct {
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	Up            int    `json:"up"`
	Down          int    `json:"down"`
}

// SavePoint is what undoing a turn that resolved a player action needs,
// stored with the turn: the state before it (JSON of engine.State, the
// catalogue left out), the action, and the first seq of the turn's events.
type SavePoint struct {
	Turn    int                  `json:"turn"`
	Action  engine.PendingAction `json:"action"`
	FromSeq int64                `json:"from_seq"`
	State   json.RawMessage      `json:"state"`
}

// MaxSavePoints is how many turns can be undone one after another.
const MaxSavePoints = 5

// Retcon undoes the turns from Turn on: their history messages and the
// memories archived since go; the save point of Turn goes; the action is
// open again (Reopen) or stays closed as abandoned. The commit carrying it
// also carries the state before the turn and the retcon event.
type Retcon struct {
	Turn     int
	ActionID string
	Reopen   bool
}

// OwnerChange is what the owner's and players' words to the table write
// with a commit (Commit.Owner): a note added or removed, a whisper queued
// or consumed by a turn, a save point, a retcon, an edited narration.
type OwnerChange struct {
	AddNote    *Note
	RemoveNote string
	AddWhisper *Whisper
	// UseWhispers marks whispers read by a turn: never read again.
	UseWhispers []int64
	Save        *SavePoint
	Retcon      *Retcon
	// Edit replaces one history message's body: a corrected narration.
	// The commit fails with ENOTFOUND, writing nothing, if the message is
	// not there.
	Edit *HistoryEdit
	// EditOf, when not 0, is the seq of the narration the commit's `edit`
	// event corrects. If a retcon retracted it (a `retcon` event after it
	// whose range holds it, engine.RetconData.Retracted), the commit fails
	// with ECONFLICT and writes nothing: its turn's messages are gone, and
	// another turn may have taken its number since.
	EditOf int64
	// Feedback stores a player's score of a narration (the last counts).
	Feedback *Feedback
}

// OwnerData is what a loaded table keeps of its notes, the whispers no
// turn read yet and its save points, each oldest first.
type OwnerData struct {
	Notes    []Note
	Whispers []Whisper
	Points   []SavePoint
	// Read are the whispers read by the turns a retcon can still undo
	// (from the oldest save point's turn on), oldest first, with the
	// turn that read each: a retcon makes them wait again.
	Read []Whisper
}

// ErrRetracted fails a commit whose EditOf names narration seq, which a
// retcon retracted.
func ErrRetracted(seq int64) error {
	return engine.Errorf(engine.ECONFLICT, "Event %d was undone by a retcon; it can no longer be corrected.", seq)
}

// ErrNoMessage fails a commit whose Edit finds no such history message.
func ErrNoMessage(e *HistoryEdit) error {
	return engine.Errorf(engine.ENOTFOUND, "No message %d of turn %d in the %s history.", e.Index, e.Turn, e.Agent)
}

// ErrNoSavePoint fails a retcon whose save point the store no longer
// holds (an erasure removed the save points of its player's tables).
func ErrNoSavePoint(turn int) error {
	return engine.Errorf(engine.ECONFLICT, "Turn %d can no longer be undone: its save point was removed.", turn)
}

// HistoryEdit replaces the body of the Index-th message (from 0, by id)
// of agent Agent's turn Turn.
type HistoryEdit struct {
	Agent string
	Turn  int
	Index int
	Body  json.RawMessage
}
