// Package jsonscan walks JSON text without building it, for the hot paths
// that read a few fields of many small documents: the hub reading its
// clients' frames and the load generator reading the server's (issue 12:
// encoding/json's reflection and allocations were a tenth of the CPU of
// each). A Scanner checks the structure it walks (brackets, commas,
// colons, strings and their escapes) but not the spelling of the literals
// it skips (numbers, true, false, null): callers that must reject what
// encoding/json rejects read only strings, or fall back to encoding/json.
package jsonscan

import (
	"bytes"
	"encoding/json"
)

// Scanner is a position in a JSON text. On what it cannot walk it becomes
// bad and walks no further.
type Scanner struct {
	b   []byte
	i   int
	bad bool
}

// New returns a Scanner at the start of b, which must be valid UTF-8
// (encoding/json would read invalid bytes as U+FFFD; Str returns them).
func New(b []byte) *Scanner { return &Scanner{b: b} }

// Bad reports whether the text was not JSON where the scanner walked.
func (s *Scanner) Bad() bool { return s.bad }

// Pos is the offset of the scanner in the text.
func (s *Scanner) Pos() int { return s.i }

// Done reports whether the scanner walked the whole text well: only white
// space is left.
func (s *Scanner) Done() bool {
	s.SkipSpace()
	return !s.bad && s.i == len(s.b)
}

// SkipSpace steps over white space.
func (s *Scanner) SkipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Enter steps into an object or array opened by open ('{' or '['), if the
// next value is one.
func (s *Scanner) Enter(open byte) bool {
	s.SkipSpace()
	if s.bad || s.i >= len(s.b) || s.b[s.i] != open {
		return false
	}
	s.i++
	return true
}

// Next steps to the next member or element of the object or array being
// walked, past its comma (none before the first), or past its closing
// bracket: false there, or on bad input. Walk one with
// `for first := true; s.Next('}', first); first = false`.
func (s *Scanner) Next(closing byte, first bool) bool {
	s.SkipSpace()
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
		s.SkipSpace()
		return true
	case first:
		return true
	}
	s.bad = true
	return false
}

// Key reads a member's key, unescaped, and its colon; the value is next.
func (s *Scanner) Key() []byte {
	key, ok := s.Str()
	if !ok {
		s.bad = true
		return nil
	}
	s.SkipSpace()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		s.bad = true
		return nil
	}
	s.i++
	s.SkipSpace()
	return key
}

// Str reads a string value and returns its contents, unescaped (a slice
// of the text unless it had escapes); any other value it skips, and ok is
// false.
func (s *Scanner) Str() (v []byte, ok bool) {
	s.SkipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		s.SkipValue()
		return nil, false
	}
	raw := s.rawString()
	if s.bad {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, true
	}
	var str string
	if json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &str) != nil {
		s.bad = true
		return nil, false
	}
	return []byte(str), true
}

// rawString steps over a string and returns its contents, still escaped.
// A control character in it (invalid JSON) makes the scanner bad.
func (s *Scanner) rawString() []byte {
	if s.bad || s.i >= len(s.b) || s.b[s.i] != '"' {
		s.bad = true
		return nil
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '\\':
			j++ // the escaped character
		case c == '"':
			s.i = j + 1
			return s.b[start:j]
		case c < 0x20:
			s.bad = true
			return nil
		}
	}
	s.bad = true
	return nil
}

// SkipValue steps over the next value.
func (s *Scanner) SkipValue() {
	s.SkipSpace()
	if s.bad || s.i >= len(s.b) {
		s.bad = true
		return
	}
	switch s.b[s.i] {
	case '"':
		s.rawString()
	case '{':
		s.i++
		for first := true; s.Next('}', first); first = false {
			s.Key()
			s.SkipValue()
		}
	case '[':
		s.i++
		for first := true; s.Next(']', first); first = false {
			s.SkipValue()
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
