package hub

import (
	"encoding/json"
	"slices"

	"tavern/internal/jsonscan"
	"tavern/internal/jsonstr"
)

// The JSON of the say path, built by hand: encoding/json's reflection and
// its sorting of map keys were a tenth of the server's CPU per `say`
// outside write(2) in the fan-out run (issue 12). Each function gives the
// bytes encoding/json gives (frames_test.go holds them to that).

// ackFrame is PROTOCOL.md's ack frame: json.Marshal of the map
// {"type": "ack", "id": id, "status": status}, keys sorted.
func ackFrame(id, status string) []byte {
	b := make([]byte, 0, len(id)+len(status)+40)
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, id)
	b = append(b, `,"status":`...)
	b = jsonstr.Append(b, status)
	return append(b, `,"type":"ack"}`...)
}

// marshalData is json.Marshal(data) for an event's data; a map whose
// values are all strings (a chat line, most notices) is written directly.
func marshalData(data map[string]any) ([]byte, error) {
	if b, ok := appendStringMap(nil, data); ok {
		return b, nil
	}
	return json.Marshal(data)
}

// appendStringMap appends m as encoding/json writes it (keys sorted) if
// every value is a string, and reports whether it did; a nil m is not
// done ("null").
func appendStringMap(b []byte, m map[string]any) ([]byte, bool) {
	if m == nil || len(m) > 8 {
		return b, false
	}
	var keysBuf [8]string
	keys := keysBuf[:0]
	size := 2
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return b, false
		}
		keys = append(keys, k)
		size += len(k) + len(s) + 6
	}
	slices.Sort(keys)
	b = slices.Grow(b, size)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonstr.Append(b, k)
		b = append(b, ':')
		b = jsonstr.Append(b, m[k].(string))
	}
	return append(b, '}'), true
}

// readInFrame is json.Unmarshal of data into an inFrame, and whether it
// succeeded; data is valid UTF-8.
func readInFrame(data []byte) (inFrame, bool) {
	if f, ok := parseInFrame(data); ok {
		return f, true
	}
	var f inFrame
	return f, json.Unmarshal(data, &f) == nil
}

// parseInFrame reads a client frame the way json.Unmarshal into inFrame
// does, for the frames clients send: an object of the keys type, id and
// text, each a string. Anything else (ok false) is left to
// json.Unmarshal, which matches keys regardless of case and takes other
// values. data is valid UTF-8.
func parseInFrame(data []byte) (f inFrame, ok bool) {
	s := jsonscan.New(data)
	if !s.Enter('{') {
		return f, false
	}
	for first := true; s.Next('}', first); first = false {
		key := s.Key()
		val, ok := s.Str()
		if !ok {
			return f, false
		}
		switch string(key) {
		case "type":
			f.Type = string(val)
		case "id":
			f.ID = string(val)
		case "text":
			f.Text = string(val)
		default: // other keys and their case-insensitive matches
			return f, false
		}
	}
	return f, s.Done()
}
