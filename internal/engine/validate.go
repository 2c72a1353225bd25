package engine

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits on what players name and write, and on a table's settings
// (PROTOCOL.md "Identity" and "Tables"). The HTTP API and the hub check them
// through CheckJSON (the raw message), CleanName, CleanText,
// TableSpec.Validate and NewCharacterSpec.Validate, never by hand.
const (
	// MaxNameLen bounds a player's and a character's name, in characters.
	MaxNameLen      = 32
	MaxTableNameLen = 64
	MaxBackstoryLen = 2000
	MaxSeats        = 8
	DefaultSeats    = 4
	// MaxTurnTimeoutS bounds the turn timer; 0 turns it off.
	MaxTurnTimeoutS     = 3600
	DefaultTurnTimeoutS = 120
)

// CleanName trims s and checks that it is a name: valid UTF-8, 1 to maxLen
// characters, no control characters, no Unicode noncharacters, no bidi
// overrides or isolates (they reorder what is shown after them), at least
// one visible character (a name of zero-width spaces reads as nothing), and
// no invisible characters (two names must not look alike and differ
// unseen). A single zero-width joiner or non-joiner inside a name stays
// allowed: emoji sequences and Persian or Indic spelling
// need them. what names the field in the error, an EINVALID *Error whose
// message is shown to the player.
func CleanName(what, s string, maxLen int) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkText(what, s, maxLen, unicode.IsControl); err != nil {
		return "", err
	}
	switch {
	case s == "":
		return "", Errorf(EINVALID, "%s must not be empty.", what)
	case hiddenInName(s):
		return "", Errorf(EINVALID, "%s must not contain invisible characters.", what)
	}
	return s, nil
}

// CleanText trims free text (chat, acts, backstories, an NPC's profile)
// and checks it: valid UTF-8, at most maxLen characters, no control
// characters other than newlines and tabs, no Unicode noncharacters, no
// bidi overrides or isolates, and, unless it is empty, a visible
// character. Bad text is refused, not stripped, so what is stored is what
// was sent. Errors are as CleanName's.
func CleanText(what, s string, maxLen int) (string, error) {
	s = strings.TrimSpace(s)
	if err := checkText(what, s, maxLen, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); err != nil {
		return "", err
	}
	return s, nil
}

// checkText is the rule CleanName and CleanText share; control says which
// control characters are refused. Empty text passes.
func checkText(what, s string, maxLen int, control func(rune) bool) error {
	switch {
	case !utf8.ValidString(s):
		return Errorf(EINVALID, "%s must be valid UTF-8.", what)
	case utf8.RuneCountInString(s) > maxLen:
		return Errorf(EINVALID, "%s must be at most %d characters.", what, maxLen)
	case strings.ContainsFunc(s, control):
		return Errorf(EINVALID, "%s must not contain control characters.", what)
	case strings.ContainsFunc(s, noncharacter):
		return Errorf(EINVALID, "%s must not contain Unicode noncharacters.", what)
	case strings.ContainsFunc(s, bidiControl):
		return Errorf(EINVALID, "%s must not contain text-direction overrides.", what)
	case s != "" && !strings.ContainsFunc(s, visible):
		return Errorf(EINVALID, "%s must contain a visible character.", what)
	}
	return nil
}

// CheckJSON reports whether data, a JSON message a client sent, can be
// decoded without loss: encoding/json silently turns invalid UTF-8 and a
// \u escape of a lone surrogate ("\ud800") into U+FFFD, so text would be
// stored other than it was sent. It returns an EINVALID *Error, or nil.
// It does not check that data is JSON; the decoder does.
func CheckJSON(data []byte) error {
	if !utf8.Valid(data) {
		return Errorf(EINVALID, "Text must be valid UTF-8.")
	}
	// A backslash in valid JSON only starts an escape inside a string, so
	// the escapes can be found without tracking strings.
	for i := 0; i < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		i++
		r, ok := uEscape(data, i-1)
		if !ok || !utf16.IsSurrogate(r) {
			continue
		}
		// A high surrogate must be followed at once by an escaped low one.
		lo, ok := uEscape(data, i+5)
		if r >= 0xDC00 || !ok || lo < 0xDC00 || lo > 0xDFFF {
			return Errorf(EINVALID, "Text must not contain a lone surrogate (\\u%04x).", r)
		}
		i += 10
	}
	return nil
}

// uEscape decodes the \uXXXX escape at data[i:], if there is one.
func uEscape(data []byte, i int) (rune, bool) {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range data[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// noncharacter reports the 66 code points Unicode reserves never to be
// characters: U+FDD0..U+FDEF and the last two of every plane.
func noncharacter(r rune) bool {
	return (0xFDD0 <= r && r <= 0xFDEF) || r&0xFFFE == 0xFFFE
}

// bidiControl reports the embedding, override and isolate controls
// (U+202A..U+202E, U+2066..U+2069); the plain marks LRM/RLM stay allowed.
func bidiControl(r rune) bool {
	return (0x202A <= r && r <= 0x202E) || (0x2066 <= r && r <= 0x2069)
}

// visible reports whether r draws something: not a space, not a format
// character (zero-width space and joiners, word joiner, BOM…), not a
// combining mark on its own, and not one of the blank "filler" letters.
func visible(r rune) bool {
	return !unicode.IsSpace(r) && !invisible(r) && !unicode.In(r, unicode.Mn, unicode.Me, unicode.Zs)
}

// invisible reports the characters that draw nothing and are no space:
// format characters (zero-width space, joiners, soft hyphen, BOM, tags…),
// the blank "filler" letters, and the supplementary variation selectors
// (they can carry hidden bytes after any character).
func invisible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E:
		return true
	}
	return unicode.Is(unicode.Cf, r) || (0xE0100 <= r && r <= 0xE01EF)
}

// hiddenInName reports an invisible character in a name other than a
// single zero-width joiner or non-joiner inside it, next to no other
// invisible character.
func hiddenInName(s string) bool {
	rs := []rune(s)
	for i, r := range rs {
		if !invisible(r) {
			continue
		}
		if (r != 0x200C && r != 0x200D) || i == 0 || i == len(rs)-1 || invisible(rs[i-1]) || invisible(rs[i+1]) {
			return true
		}
	}
	return false
}

// TableSpec is what a player asks for when creating a table (PROTOCOL.md
// "POST /api/tables"). Empty strings and nil numbers take their defaults.
type TableSpec struct {
	Name       string
	Adventure  string
	Ruleset    string
	CombatMode string
	// Seats is nil for DefaultSeats; an explicit 0 is out of range.
	Seats *int
	// TurnTimeoutS is nil for DefaultTurnTimeoutS; 0 turns the timer off.
	TurnTimeoutS *int
	// Private and NPCHP are the owner's settings ("" reads NPCHPExact).
	Private bool
	NPCHP   string
}

// Validate checks s against the rules for a new table and returns it with
// its name cleaned and every default filled in (ruleset d100, tactical
// combat, DefaultSeats, DefaultTurnTimeoutS), so Seats and TurnTimeoutS
// are set. Adventure must be one of adventures or empty: the caller picks
// its default adventure. Errors are EINVALID *Errors naming the field; the
// fields are checked in the order of the struct.
func (s TableSpec) Validate(adventures []string) (TableSpec, error) {
	name, err := CleanName("name", s.Name, MaxTableNameLen)
	if err != nil {
		return TableSpec{}, err
	}
	s.Name = name
	if s.Adventure != "" && !slices.Contains(adventures, s.Adventure) {
		return TableSpec{}, Errorf(EINVALID, "Unknown adventure %q; known: %s.", truncate(s.Adventure, 40), strings.Join(adventures, ", "))
	}
	if s.Ruleset == "" {
		s.Ruleset = RulesetD100
	}
	if !ValidRuleset(s.Ruleset) {
		return TableSpec{}, Errorf(EINVALID, `ruleset must be "d100" or "d20".`)
	}
	if s.CombatMode == "" {
		s.CombatMode = CombatTactical
	}
	if s.CombatMode != CombatTactical && s.CombatMode != CombatNarrative {
		return TableSpec{}, Errorf(EINVALID, `combat_mode must be "tactical" or "narrative".`)
	}
	seats, ok := setting(s.Seats, DefaultSeats, 1, MaxSeats)
	if !ok {
		return TableSpec{}, Errorf(EINVALID, "seats must be between 1 and %d.", MaxSeats)
	}
	timeout, ok := setting(s.TurnTimeoutS, DefaultTurnTimeoutS, 0, MaxTurnTimeoutS)
	if !ok {
		return TableSpec{}, Errorf(EINVALID, "turn_timeout_s must be between 0 and %d.", MaxTurnTimeoutS)
	}
	if s.NPCHP, err = checkNPCHP(s.NPCHP); err != nil {
		return TableSpec{}, err
	}
	s.Seats, s.TurnTimeoutS = seats, timeout
	return s, nil
}

// Validate checks a new character and returns it cleaned: a name of 1 to
// MaxNameLen characters, a backstory of at most MaxBackstoryLen, and a
// class that is empty (the first class) or one of classes. Errors are
// EINVALID *Errors naming the field.
func (s NewCharacterSpec) Validate(classes []Class) (NewCharacterSpec, error) {
	name, err := CleanName("character name", s.Name, MaxNameLen)
	if err != nil {
		return NewCharacterSpec{}, err
	}
	back, err := CleanText("backstory", s.Backstory, MaxBackstoryLen)
	if err != nil {
		return NewCharacterSpec{}, err
	}
	class := strings.TrimSpace(s.Class)
	if class != "" && len(classes) > 0 && !slices.ContainsFunc(classes, func(c Class) bool { return c.ID == class }) {
		ids := make([]string, 0, len(classes))
		for _, c := range classes {
			ids = append(ids, c.ID)
		}
		return NewCharacterSpec{}, Errorf(EINVALID, "Unknown class %q; pick one of: %s.", truncate(class, 40), strings.Join(ids, ", "))
	}
	return NewCharacterSpec{Name: name, Class: class, Backstory: back}, nil
}

// setting returns a copy of the number a spec asks for, or def when it
// asks for none, and whether it lies in lo..hi.
func setting(p *int, def, lo, hi int) (*int, bool) {
	v := def
	if p != nil {
		v = *p
	}
	return &v, lo <= v && v <= hi
}

// truncate shortens what a player typed before an error message echoes it.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
