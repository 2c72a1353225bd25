package store

import "time"

// Adventure is an adventure a player wrote (PROTOCOL.md "Adventures"):
// its YAML source and who may change it. The built-in adventures are not
// stored.
type Adventure struct {
	ID         string
	AuthorID   string
	AuthorName string
	Title      string
	Summary    string
	Source     []byte
	// ForkedFrom is the id of the adventure this one was copied from.
	ForkedFrom string
	// Hidden adventures are gone from the list and new tables, but the
	// tables made from them play on.
	Hidden    bool
	CreatedAt time.Time
	UpdatedAt time.Time
}
