package store

import (
	"time"

	"tavern/internal/engine"
)

// SettingsChange is what a commit changes of the owner's side of a table
// (PROTOCOL.md "Table owners"), durable with the commit's events: the
// audit line of a kick and the ban it carries land together or not at all.
// Zero fields change nothing.
type SettingsChange struct {
	// Name renames the table; Private sets its private mark.
	Name    *string
	Private *bool
	// InviteHash, when set, replaces the table's invite code hash: the
	// old code stops working with this commit.
	InviteHash []byte
	// Ban bans a player (at BannedAt); Unban lifts a ban.
	Ban, Unban string
	BannedAt   time.Time
}

// Access is what the hub needs of a table to decide who may see it,
// beyond its engine.Table (owner, private mark): the hash of its current
// invite code (nil: none yet) and the players banned from it.
type Access struct {
	InviteHash []byte
	Bans       []string
}

// PlayerTable is a table a player owns or sits at, for the player's own
// list (GET /api/players/me/tables).
type PlayerTable struct {
	Table engine.Table
	Mode  string
	// Seated counts the table's taken seats; Seat is the player's, ""
	// when the player only owns the table, and Character then zero.
	Seated      int
	Seat        string
	Character   PlayerCharacter
	Flags       TableFlags
	LastEventAt time.Time
}

// PlayerCharacter is a character in short.
type PlayerCharacter struct {
	ID    string
	Name  string
	Class string
	Level int
}
