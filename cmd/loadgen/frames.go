package main

import (
	"bytes"
	"encoding/json"
	"errors"
)

// frame is what a player bot reads of a server frame: the fields of
// PROTOCOL.md's ack, error and event frames it follows, and of an event's
// data, the ids it matches its actions and turns by.
type frame struct {
	Type, ID, Code, Kind string
	// PlayerID and ActionID are the event data's player_id and
	// action_id; Entry is its entry's id (a turn's InitiativeEntry).
	PlayerID, ActionID, Entry string
}

// wireFrame is the JSON of a frame, as much of it as frame holds.
type wireFrame struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Code string `json:"code"`
	Kind string `json:"kind"`
	Data struct {
		PlayerID string `json:"player_id"`
		ActionID string `json:"action_id"`
		Entry    struct {
			ID string `json:"id"`
		} `json:"entry"`
	} `json:"data"`
}

// decodeFrame reads b's fields; ok is false if b is not a JSON object. A
// field of another type than frame's (an entry that is a string, in a
// status event) is left empty.
func decodeFrame(b []byte) (f frame, ok bool) {
	var w wireFrame
	if err := json.Unmarshal(b, &w); err != nil {
		var te *json.UnmarshalTypeError
		if trimmed := bytes.TrimLeft(b, " \t\r\n"); !errors.As(err, &te) || len(trimmed) == 0 || trimmed[0] != '{' {
			return frame{}, false
		}
	}
	return frame{Type: w.Type, ID: w.ID, Code: w.Code, Kind: w.Kind,
		PlayerID: w.Data.PlayerID, ActionID: w.Data.ActionID, Entry: w.Data.Entry.ID}, true
}

// readFrame counts a frame and, for a player (follow), returns it with ok
// true when the player reads it (follows). A frame it only counts is not
// decoded: its type and kind are found where the server writes them
// (peek). The bots share the server's cores, and a decode with
// encoding/json costs them some 50 times a peek (BenchmarkReadFrame).
func readFrame(b []byte, st *stats, follow bool) (f frame, ok bool) {
	typ, kind, known := peek(b)
	decoded := false
	if !known {
		if f, ok = decodeFrame(b); !ok {
			return frame{}, false
		}
		typ, kind, decoded = []byte(f.Type), []byte(f.Kind), true
	}
	switch string(typ) {
	case "event":
		st.events.Add(1)
	case "narration_delta":
		st.deltas.Add(1)
	}
	if !follow || !follows(typ, kind) {
		return frame{}, false
	}
	if decoded {
		return f, true
	}
	return decodeFrame(b)
}

// follows reports whether a player reads a frame of type typ (an event's
// of kind kind): an ack, an error, or an event of a kind it follows; a
// narration delta it only counts.
func follows(typ, kind []byte) bool {
	switch string(typ) {
	case "ack", "error":
		return true
	case "event":
		return followed[string(kind)]
	}
	return false
}

// followed are the event kinds a player bot reads (playSeat, track); the
// rest (dice, damage, world…) it only counts.
var followed = map[string]bool{"action": true, "narration": true, "combat_started": true, "combat_ended": true, "turn": true}

// peek finds a frame's type, and an event's kind, where the server writes
// them: the type first ({"type":"event",…}, the event and snapshot
// structs) or last (…,"type":"ack"}, the frames whose fields are sorted),
// an event's kind after its seq and ts. known is false otherwise: the
// frame is decoded.
func peek(b []byte) (typ, kind []byte, known bool) {
	const key = `"type":"`
	if rest, ok := bytes.CutPrefix(b, []byte("{"+key)); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			typ = rest[:i]
		}
	} else if i := bytes.LastIndex(b, []byte(","+key)); i >= 0 {
		rest := b[i+len(key)+1:]
		if j := bytes.IndexByte(rest, '"'); j >= 0 && j+2 == len(rest) && rest[j+1] == '}' {
			typ = rest[:j]
		}
	}
	if typ == nil {
		return nil, nil, false
	}
	if string(typ) != "event" {
		return typ, nil, true
	}
	const kindKey = `,"kind":"`
	head := b[:min(len(b), 128)]
	i := bytes.Index(head, []byte(kindKey))
	if i < 0 {
		return nil, nil, false
	}
	rest := head[i+len(kindKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil, nil, false
	}
	return typ, rest[:j], true
}

// framesOf splits a message into its frames, appended to into[:0]: the
// message, or the elements of a batched message (PROTOCOL.md "Batched
// frames": a JSON array of frames; none if it is not one).
func framesOf(b []byte, into [][]byte) [][]byte {
	into = into[:0]
	if len(b) == 0 || b[0] != '[' {
		return append(into, b)
	}
	var elems []json.RawMessage
	if json.Unmarshal(b, &elems) != nil {
		return nil
	}
	for _, e := range elems {
		into = append(into, e)
	}
	return into
}
