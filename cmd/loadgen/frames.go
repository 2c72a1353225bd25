package main

import (
	"bytes"
	"encoding/json"
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
	s := scanner{b: b, i: 1}
	for first := true; ; first = false {
		if !s.next(']', first) {
			break
		}
		start := s.i
		s.skipValue()
		into = append(into, b[start:s.i])
	}
	if s.bad || s.i != len(b) {
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
	s := scanner{b: b}
	if !s.enter('{') {
		return f, false
	}
	for first := true; s.next('}', first); first = false {
		switch string(s.key()) {
		case "type":
			s.str(&f.Type)
		case "id":
			s.str(&f.ID)
		case "code":
			s.str(&f.Code)
		case "kind":
			s.str(&f.Kind)
		case "data":
			s.eventData(&f)
		default:
			s.skipValue()
		}
	}
	s.skipSpace()
	if s.bad || s.i != len(b) {
		return frame{}, false
	}
	return f, true
}

// eventData reads data's player_id, action_id and entry.id, if data is
// an object. Each read replaces what an earlier member of the same name
// gave, as encoding/json does.
func (s *scanner) eventData(f *frame) {
	f.PlayerID, f.ActionID, f.Entry = "", "", ""
	if !s.enter('{') {
		s.skipValue()
		return
	}
	for first := true; s.next('}', first); first = false {
		switch string(s.key()) {
		case "player_id":
			s.str(&f.PlayerID)
		case "action_id":
			s.str(&f.ActionID)
		case "entry":
			s.entryID(&f.Entry)
		default:
			s.skipValue()
		}
	}
}

func (s *scanner) entryID(id *string) {
	*id = ""
	if !s.enter('{') {
		s.skipValue()
		return
	}
	for first := true; s.next('}', first); first = false {
		if string(s.key()) == "id" {
			s.str(id)
		} else {
			s.skipValue()
		}
	}
}

// scanner walks JSON text without building it. It expects valid JSON (the
// server's frames); on what it cannot walk it sets bad and stops.
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// enter steps into an object or array opened by open, if the next value
// is one.
func (s *scanner) enter(open byte) bool {
	s.skipSpace()
	if s.bad || s.i >= len(s.b) || s.b[s.i] != open {
		return false
	}
	s.i++
	return true
}

// next steps to the next member or element of the object or array being
// walked, past its comma (none before the first), or past its closing
// bracket: false there, or on bad input.
func (s *scanner) next(closing byte, first bool) bool {
	s.skipSpace()
	if s.bad || s.i >= len(s.b) {
		s.bad = true
		return false
	}
	switch c := s.b[s.i]; {
	case c == closing:
		s.i++
		return false
	case !first && c == ',':
		s.i++
		s.skipSpace()
		return true
	case first:
		return true
	}
	s.bad = true
	return false
}

// key reads a member's key and its colon; the value is next.
func (s *scanner) key() []byte {
	raw := s.rawString()
	if bytes.IndexByte(raw, '\\') >= 0 {
		raw = []byte(s.unquote(raw))
	}
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		s.bad = true
		return nil
	}
	s.i++
	s.skipSpace()
	return raw
}

// str reads a string value into v; any other value is skipped and empties
// v.
func (s *scanner) str(v *string) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		*v = ""
		s.skipValue()
		return
	}
	raw := s.rawString()
	if bytes.IndexByte(raw, '\\') >= 0 {
		*v = s.unquote(raw)
		return
	}
	*v = intern(raw)
}

// unquote decodes an escaped string's contents (rare in the fields read).
func (s *scanner) unquote(raw []byte) string {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var v string
	if json.Unmarshal(quoted, &v) != nil {
		s.bad = true
	}
	return v
}

// rawString steps over a string and returns its contents, still escaped.
func (s *scanner) rawString() []byte {
	if s.bad || s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bad = true
		return nil
	}
	start := s.i + 1
	for j := start; ; {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			s.bad = true
			return nil
		}
		end := j + k
		if backslashesBefore(s.b[start:end])%2 == 0 {
			s.i = end + 1
			return s.b[start:end]
		}
		j = end + 1
	}
}

// backslashesBefore counts the backslashes that end b: an odd count
// escapes the quote after them.
func backslashesBefore(b []byte) int {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n
}

// skipValue steps over the next value.
func (s *scanner) skipValue() {
	s.skipSpace()
	if s.bad || s.i >= len(s.b) {
		s.bad = true
		return
	}
	switch s.b[s.i] {
	case '"':
		s.rawString()
	case '{':
		s.i++
		for first := true; s.next('}', first); first = false {
			s.key()
			s.skipValue()
		}
	case '[':
		s.i++
		for first := true; s.next(']', first); first = false {
			s.skipValue()
		}
	default: // a number, true, false or null
		start := s.i
		for s.i < len(s.b) && !endsLiteral(s.b[s.i]) {
			s.i++
		}
		if s.i == start {
			s.bad = true
		}
	}
}

func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
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
