package store

import "time"

// PlayerExport is all of a player's data, as the operator exports it
// (PROTOCOL.md "Operator, continued"): both engines return it.
type PlayerExport struct {
	Player     PlayerDetail        `json:"player"`
	Characters []ExportedCharacter `json:"characters"`
	Actions    []PlayerAction      `json:"actions"`
	Chat       []ExportedChat      `json:"chat"`
}

// ExportedCharacter is one of a player's characters, backstory included.
type ExportedCharacter struct {
	TableID   string `json:"table_id"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Class     string `json:"class"`
	Backstory string `json:"backstory"`
	Level     int    `json:"level"`
	XP        int    `json:"xp"`
	HP        int    `json:"hp"`
	MaxHP     int    `json:"max_hp"`
	Gold      int    `json:"gold"`
}

// ExportedChat is one of a player's chat lines at a table (event Seq).
type ExportedChat struct {
	TableID string    `json:"table_id"`
	Seq     int64     `json:"seq"`
	TS      time.Time `json:"ts"`
	Text    string    `json:"text"`
}
