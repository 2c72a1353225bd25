package engine

// The events of PROTOCOL.md "Undo, notes and the owner's word to the DM":
// the table's notes, a corrected narration and an undone turn.

const (
	EventNote        Kind = "note"
	EventNoteRemoved Kind = "note_removed"
	EventEdit        Kind = "edit"
	EventRetcon      Kind = "retcon"
)

// NoteData is the payload of `note`: a fact the table established. By is
// the id of the player who wrote it.
type NoteData struct {
	By   string `json:"by"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

// NoteRemovedData is the payload of `note_removed`.
type NoteRemovedData struct {
	By string `json:"by"`
	ID string `json:"id"`
}

// EditData is the payload of `edit`: the narration of event Seq now reads
// Text.
type EditData struct {
	By   string `json:"by"`
	Seq  int64  `json:"seq"`
	Text string `json:"text"`
}

// RetconData is the payload of `retcon`: the events FromSeq..ToSeq of the
// undone turn are retracted (they stay in the log). ActionID is the action
// the turn resolved; Then is "retry" or "drop".
type RetconData struct {
	ActionID string `json:"action_id,omitempty"`
	By       string `json:"by"`
	FromSeq  int64  `json:"from_seq"`
	Then     string `json:"then,omitempty"`
	ToSeq    int64  `json:"to_seq"`
	Turn     string `json:"turn"`
}

func (NoteData) EventKind() Kind        { return EventNote }
func (NoteRemovedData) EventKind() Kind { return EventNoteRemoved }
func (EditData) EventKind() Kind        { return EventEdit }
func (RetconData) EventKind() Kind      { return EventRetcon }

// Retracted reports whether event e is retracted by retcon r: it lies in
// r's range and belongs to the turn's play (table chat, seats and notes
// are not the DM's turn and stay), or it is the action r dropped.
func (r RetconData) Retracted(e Event) bool {
	if a, ok := e.Data.(ActionData); ok && r.Then == "drop" && r.ActionID != "" && a.ActionID == r.ActionID {
		return true
	}
	if e.Seq < r.FromSeq || e.Seq > r.ToSeq {
		return false
	}
	switch e.Kind {
	case EventChat, EventPlayerJoined, EventPlayerLeft, EventNote, EventNoteRemoved, EventEdit, EventRetcon:
		return false
	}
	return true
}
