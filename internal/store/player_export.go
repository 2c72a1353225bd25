package store

// PlayerExport is all of a player's data, as the operator exports it
// (PROTOCOL.md "Operator, continued"): both engines return it.
type PlayerExport struct {
	Player     PlayerDetail     `json:"player"`
	Characters []map[string]any `json:"characters"`
	Actions    []PlayerAction   `json:"actions"`
	Chat       []map[string]any `json:"chat"`
}
