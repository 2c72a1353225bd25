package main

import (
	"bytes"

	"tavern/internal/jsonscan"
)

// The bots read tens of thousands of frames a second on the machine they
// measure, and every millisecond they spend is taken from the server
// (issue 12). So they decode no frame with encoding/json: a player's
// frames are scanned for the few fields it follows (scanFrame), the rest
// are only counted (readFrame), and a batched message is split without
// being decoded (framesOf). Tests hold the scans to encoding/json on the
// server's real frames.

// frame is what a player bot reads of a server frame: the fields of
// PROTOCOL.md's ack, error and event frames it follows, and of an event's
// data, the ids it matches its actions and turns by.
type frame struct {
	Type, ID, Code, Kind string
	// PlayerID and ActionID are the event data's player_id and
	// action_id; Entry is its entry's id (a turn's InitiativeEntry).
	PlayerID, ActionID, Entry string
}

// readFrame counts a frame and, for a player (follow), returns it with ok
// true when the player reads it (follows).
func readFrame(b []byte, st *stats, follow bool) (f frame, ok bool) {
	typ, known := frameType(b)
	if !known {
		if f, ok = scanFrame(b); !ok {
			return frame{}, false
		}
		typ = f.Type
	}
	switch typ {
	case "event":
		st.events.Add(1)
	case "narration_delta":
		st.deltas.Add(1)
	}
	if !follow || !follows(typ, b) {
		return frame{}, false
	}
	if known {
		return scanFrame(b)
	}
	return f, true
}

// follows reports whether a player reads a frame of type typ: an ack, an
// error, or an event of a kind it follows (or whose kind eventKind does
// not find); a narration delta it only counts.
func follows(typ string, b []byte) bool {
	switch typ {
	case "ack", "error":
		return true
	case "event":
		kind, found := eventKind(b)
		return !found || followed[kind]
	}
	return false
}

// followed are the event kinds a player bot reads (playSeat, track); the
// rest (dice, damage, world…) it only counts.
var followed = map[string]bool{"action": true, "narration": true, "combat_started": true, "combat_ended": true, "turn": true}

// eventKind reads an event frame's kind without decoding it, where the
// server writes it: after seq and ts ({"type":"event","seq":…,"ts":"…","kind":"…").
func eventKind(b []byte) (kind string, found bool) {
	const key = `,"kind":"`
	head := b[:min(len(b), 128)]
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return "", false
	}
	rest := head[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return intern(rest[:j]), true
}

// frameType reads a frame's type without decoding it, where the server
// writes it first ({"type":"event",…}, a struct) or last (…,"type":"ack"},
// a map's sorted keys); known is false otherwise.
func frameType(b []byte) (typ string, known bool) {
	const key = `"type":"`
	if rest, ok := bytes.CutPrefix(b, []byte("{"+key)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			return intern(rest[:i]), true
		}
	}
	if i := bytes.LastIndex(b, []byte(","+key)); i >= 0 {
		rest := b[i+len(key)+1:]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && j+2 == len(rest) && rest[j+1] == '}' {
			return intern(rest[:j]), true
		}
	}
	return "", false
}

// framesOf splits a message into its frames, appended to into[:0]: the
// message, or the elements of a batched message (a JSON array of frames;
// none if it is not one). The frames are b's bytes.
func framesOf(b []byte, into [][]byte) [][]byte {
	into = into[:0]
	if len(b) == 0 || b[0] != '[' {
		return append(into, b)
	}
	s := jsonscan.New(b)
	s.Enter('[')
	for first := true; s.Next(']', first); first = false {
		start := s.Pos()
		s.SkipValue()
		into = append(into, b[start:s.Pos()])
	}
	if !s.Done() {
		return nil
	}
	return into
}

// scanFrame reads a frame's fields as encoding/json would decode them
// into frame's JSON names (type, id, code, kind, data.player_id,
// data.action_id, data.entry.id), except that keys match exactly, not
// regardless of case (the server writes them so); ok is false if b is
// not a JSON object.
func scanFrame(b []byte) (f frame, ok bool) {
	s := jsonscan.New(b)
	if !s.Enter('{') {
		return f, false
	}
	members(s, func(key []byte) {
		switch string(key) {
		case "type":
			str(s, &f.Type)
		case "id":
			str(s, &f.ID)
		case "code":
			str(s, &f.Code)
		case "kind":
			str(s, &f.Kind)
		case "data":
			eventData(s, &f)
		default:
			s.SkipValue()
		}
	})
	if !s.Done() {
		return frame{}, false
	}
	return f, true
}

// eventData reads data's player_id, action_id and entry.id, if data is
// an object. Each read replaces what an earlier member of the same name
// gave, as encoding/json does.
func eventData(s *jsonscan.Scanner, f *frame) {
	f.PlayerID, f.ActionID, f.Entry = "", "", ""
	object(s, func(key []byte) {
		switch string(key) {
		case "player_id":
			str(s, &f.PlayerID)
		case "action_id":
			str(s, &f.ActionID)
		case "entry":
			entryID(s, &f.Entry)
		default:
			s.SkipValue()
		}
	})
}

func entryID(s *jsonscan.Scanner, id *string) {
	*id = ""
	object(s, func(key []byte) {
		if string(key) == "id" {
			str(s, id)
		} else {
			s.SkipValue()
		}
	})
}

// object reads the members of an object value with member, which must
// read or skip each member's value; any other value is skipped.
func object(s *jsonscan.Scanner, member func(key []byte)) {
	if !s.Enter('{') {
		s.SkipValue()
		return
	}
	members(s, member)
}

// members calls member for each member of the object s has entered, up
// to its closing brace.
func members(s *jsonscan.Scanner, member func(key []byte)) {
	for first := true; s.Next('}', first); first = false {
		member(s.Key())
	}
}

// str reads a string value into v; any other value is skipped and empties
// v.
func str(s *jsonscan.Scanner, v *string) {
	raw, ok := s.Str()
	if !ok {
		*v = ""
		return
	}
	*v = intern(raw)
}

// intern returns PROTOCOL.md's frame types, event kinds and error codes
// without allocating (a frame's type and kind are read from every frame);
// other values are copied.
func intern(b []byte) string {
	switch string(b) {
	case "event":
		return "event"
	case "ack":
		return "ack"
	case "error":
		return "error"
	case "narration_delta":
		return "narration_delta"
	case "welcome":
		return "welcome"
	case "snapshot":
		return "snapshot"
	case "action":
		return "action"
	case "narration":
		return "narration"
	case "turn":
		return "turn"
	case "combat_started":
		return "combat_started"
	case "combat_ended":
		return "combat_ended"
	case "dice":
		return "dice"
	case "damage":
		return "damage"
	case "heal":
		return "heal"
	case "status":
		return "status"
	case "world":
		return "world"
	case "mode":
		return "mode"
	case "chat":
		return "chat"
	case "system":
		return "system"
	case "not_your_turn":
		return "not_your_turn"
	}
	return string(b)
}
