package engine

// ErasePlayerFrom returns e without what it says of player playerID, as
// an erasure leaves the game log (PROTOCOL.md "Operator, continued"):
// their name replaced by name in their seat, chat and action events, the
// text of their chat removed; the event keeps its kind, seq and place.
// ok is false, and e unchanged, when e is not one of theirs. The stores
// apply the same rule to their rows (internal/db, internal/pgdb
// ErasePlayer); this is it for the events a table holds in memory.
func ErasePlayerFrom(e Event, playerID, name string) (_ Event, ok bool) {
	if playerID == "" {
		return e, false
	}
	switch d := e.Data.(type) {
	case ChatData:
		if d.PlayerID != playerID {
			return e, false
		}
		d.Name, d.Text = name, ""
		e.Data = d
	case PlayerJoinedData:
		if d.PlayerID != playerID {
			return e, false
		}
		d.Name = name
		e.Data = d
	case PlayerLeftData:
		if d.PlayerID != playerID {
			return e, false
		}
		d.Name = name
		e.Data = d
	case ActionData:
		if d.PlayerID != playerID {
			return e, false
		}
		d.Name = name
		e.Data = d
	default:
		return e, false
	}
	return e, true
}
