package store

import "time"

// Spend is what the models cost on one UTC day (2006-01-02) for one table
// ("" for calls of no table, such as the data agent's).
type Spend struct {
	Day     string  `json:"day"`
	TableID string  `json:"table_id"`
	Calls   int     `json:"calls"`
	USD     float64 `json:"usd"`
}

// TableBudget is a table's own daily model budget and who set it last.
type TableBudget struct {
	TableID   string  `json:"table_id"`
	USDPerDay float64 `json:"usd_per_day"`
	SetBy     string  `json:"set_by"`
}

// PlayerRow is a player as the operator's search lists them.
type PlayerRow struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// Tables counts the tables they own or sit at.
	Tables int  `json:"tables"`
	Banned bool `json:"banned"`
	Erased bool `json:"erased,omitempty"`
}

// PlayerDetail is everything the operator's player page shows.
type PlayerDetail struct {
	PlayerRow
	BannedAt  *time.Time     `json:"banned_at,omitempty"`
	BanReason string         `json:"ban_reason,omitempty"`
	Seats     []PlayerSeat   `json:"seats"`
	Actions   int            `json:"actions"`
	Recent    []PlayerAction `json:"recent_actions"`
	// Spend is the model calls of the turns that played their actions.
	Spend PlayerSpend `json:"spend"`
	// Feedback is the scores they gave narrations (none where the server
	// keeps no feedback).
	Feedback []PlayerFeedback `json:"feedback"`
}

// PlayerSpend is what the model calls made for a player's actions cost.
type PlayerSpend struct {
	Calls int     `json:"calls"`
	USD   float64 `json:"usd"`
}

// PlayerSeat is a table a player owns or sits at, with their character.
type PlayerSeat struct {
	TableID   string `json:"table_id"`
	TableName string `json:"table_name"`
	Owner     bool   `json:"owner"`
	Seat      string `json:"seat,omitempty"`
	Character string `json:"character,omitempty"`
	Class     string `json:"class,omitempty"`
	Level     int    `json:"level,omitempty"`
	Closed    bool   `json:"closed,omitempty"`
}

// PlayerAction is one action a player sent.
type PlayerAction struct {
	TableID   string    `json:"table_id"`
	ActionID  string    `json:"action_id"`
	Text      string    `json:"text"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
}

// PlayerFeedback is one score a player gave a narration.
type PlayerFeedback struct {
	TableID string `json:"table_id"`
	Seq     int64  `json:"seq"`
	Score   int    `json:"score"`
	Comment string `json:"comment,omitempty"`
}

// ErasedName replaces an erased player's name everywhere.
const ErasedName = "deleted player"

// ConsoleUser is a named console token with a role (viewer or
// moderator); only its hash is stored.
type ConsoleUser struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      string     `json:"role"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// AskConversation is one of the data agent's conversations, as the Ask
// page lists them. First is the body of its first message (the first
// question, as JSON).
type AskConversation struct {
	ID        string    `json:"conversation"`
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Questions int       `json:"questions"`
	First     []byte    `json:"-"`
}
