package store

import "time"

// The states of a pending action's life:
// pending → running → failed (attempts counted) → … → resolved or
// abandoned by the operator.
const (
	ActionPending   = "pending"
	ActionRunning   = "running"
	ActionFailed    = "failed"
	ActionResolved  = "resolved"
	ActionAbandoned = "abandoned"
)

// ActionLife is where an open pending action is in its life.
type ActionLife struct {
	ActionID string `json:"action_id"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

// TableFlags are the operator's marks on a table.
type TableFlags struct {
	Paused bool
	// Closed is set when the operator closed the table: it is gone from
	// the lobby and kept read-only for the admin.
	Closed   bool
	ClosedAt time.Time
}

// Error kinds of a failed model call (LLMCall.ErrorKind).
const (
	CallTimeout       = "timeout"
	CallRateLimit     = "rate_limit"
	CallServer        = "server"
	CallInvalidOutput = "invalid_output"
	CallAuth          = "auth"
	CallOther         = "other"
)
