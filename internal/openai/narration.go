package openai

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// narrationScanner pulls the value of the top-level "narration" string out
// of a tool call's JSON arguments while they stream in, fragment by
// fragment, so the players read the narration as the model writes it
// instead of when the call is complete. It is a small JSON lexer: it
// tracks nesting, strings and escapes (also when an escape is split across
// fragments) and decodes the narration's escapes, \uXXXX surrogate pairs
// included. Malformed JSON only stops it from emitting more; the complete
// arguments are validated later by the tool. Not safe for concurrent use.
type narrationScanner struct {
	depth    int
	inString bool
	escape   bool
	// uni collects the hex digits of a \u escape in progress.
	uni     []byte
	pending rune // a high surrogate waiting for its low half
	// key collects a string read at depth 1 in key position (isKey);
	// lastKey is the last complete one; afterKey says its colon was seen,
	// so the next string is its value.
	key      strings.Builder
	isKey    bool
	lastKey  string
	afterKey bool
	// inNarr: the current string is the narration value.
	inNarr bool
	done   bool
	broken bool
}

// feed consumes the next fragment and returns the narration text it
// completes (possibly empty).
func (s *narrationScanner) feed(frag string) string {
	if s.broken {
		return ""
	}
	var out strings.Builder
	for i := 0; i < len(frag); i++ {
		c := frag[i]
		if s.inString {
			s.stringByte(c, &out)
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r', ',':
			if c == ',' {
				s.afterKey = false
			}
		case '{', '[':
			s.depth++
			s.afterKey = false
		case '}', ']':
			s.depth--
			s.afterKey = false
		case ':':
			if s.depth == 1 {
				s.afterKey = true
			}
		case '"':
			s.inString = true
			switch {
			case s.depth == 1 && s.afterKey:
				s.inNarr = s.lastKey == "narration" && !s.done
				s.isKey = false
			case s.depth == 1:
				s.isKey = true
				s.key.Reset()
			default:
				s.isKey = false
			}
		default:
			// numbers, true/false/null: values we do not stream
		}
		if s.depth < 0 {
			s.broken = true
			return out.String()
		}
	}
	return out.String()
}

func (s *narrationScanner) stringByte(c byte, out *strings.Builder) {
	emit := func(r rune) {
		if s.inNarr {
			out.WriteRune(r)
		} else if s.isKey {
			s.key.WriteRune(r)
		}
	}
	emitByte := func(b byte) {
		if s.inNarr {
			out.WriteByte(b)
		} else if s.isKey {
			s.key.WriteByte(b)
		}
	}
	switch {
	case s.uni != nil:
		s.uni = append(s.uni, c)
		if len(s.uni) < 4 {
			return
		}
		v, err := strconv.ParseUint(string(s.uni), 16, 32)
		s.uni = nil
		if err != nil {
			s.broken = true
			return
		}
		r := rune(v)
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00:
			s.pending = r
			return
		case utf16.IsSurrogate(r) && s.pending != 0:
			r = utf16.DecodeRune(s.pending, r)
		case utf16.IsSurrogate(r):
			r = utf8.RuneError
		}
		s.pending = 0
		emit(r)
	case s.escape:
		s.escape = false
		if c == 'u' {
			s.uni = make([]byte, 0, 4)
			return
		}
		if s.pending != 0 {
			emit(utf8.RuneError)
			s.pending = 0
		}
		switch c {
		case 'n':
			emitByte('\n')
		case 't':
			emitByte('\t')
		case 'r':
			emitByte('\r')
		case 'b':
			emitByte('\b')
		case 'f':
			emitByte('\f')
		default: // " \ /
			emitByte(c)
		}
	case c == '\\':
		s.escape = true
	case c == '"':
		if s.pending != 0 {
			emit(utf8.RuneError)
			s.pending = 0
		}
		s.inString = false
		if s.isKey {
			s.lastKey = s.key.String()
			s.isKey = false
		}
		if s.inNarr {
			s.inNarr = false
			s.done = true
		}
		if s.depth == 1 && !s.isKey {
			s.afterKey = false
		}
	default:
		if s.pending != 0 {
			emit(utf8.RuneError)
			s.pending = 0
		}
		// Raw UTF-8 bytes pass through; a rune split across fragments is
		// whole again once both halves are written.
		emitByte(c)
	}
}
