package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// How both stores write what they keep as text, so that a database moved
// from one engine to the other, or read by the data agent, holds the same
// bytes.

// TimeFormat is RFC 3339 with a fixed nine-digit fraction: RFC3339Nano
// trims trailing zeros, and then "…05Z" sorts after "…05.5Z", which breaks
// ORDER BY on the text.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// FormatTime writes t, in UTC, as TimeFormat.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads a time written by FormatTime (any RFC 3339 time), in UTC.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// ParseOptTime is ParseTime with "" for the zero time.
func ParseOptTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return ParseTime(s)
}

// PlainJSON encodes values that cannot fail to encode (strings, ints,
// slices and maps of them, engine.Stats, []engine.Exit); it panics on one
// that does.
func PlainJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %T: %v", v, err))
	}
	return string(b)
}

// DecodeJSON decodes the JSON column s (named what in the error) into v.
func DecodeJSON(s string, v any, what string) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return fmt.Errorf("decode %s: %w", what, err)
	}
	return nil
}

// ErasedEventKinds are the kinds of event that name a player (their
// player_id and name): the ones an erasure rewrites (ErasedEventData).
var ErasedEventKinds = []string{"chat", "player_joined", "player_left", "action"}

// ErasedEventData returns the JSON data of an event of kind, of an erased
// player, as the erasure leaves it: the name is ErasedName and a chat
// line's text is gone. Every other byte stays as it was, so a replay
// still gives the bytes the live frame carried but for those two values,
// on either engine.
func ErasedEventData(kind string, data []byte) ([]byte, error) {
	name, _ := json.Marshal(ErasedName)
	out, err := replaceField(data, "name", name)
	if err == nil && kind == "chat" {
		out, err = replaceField(out, "text", []byte(`""`))
	}
	return out, err
}

// replaceField returns the JSON object data with the value of its
// top-level member key replaced by value (JSON), the other bytes
// untouched; data itself if it has no such member.
func replaceField(data []byte, key string, value []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.40q", data)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if tok != key {
			continue
		}
		// The decoder has just read the value: it ends at InputOffset.
		end := int(dec.InputOffset())
		start := end - len(v)
		if start < 0 || !bytes.Equal(data[start:end], v) {
			return nil, fmt.Errorf("member %q not found as read", key)
		}
		return append(append(append([]byte{}, data[:start]...), value...), data[end:]...), nil
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return data, nil
}
