package engine

import (
	"strings"
	"testing"
)

func TestCleanName(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"trimmed", "  Ann  ", "Ann", ""},
		{"32 multibyte", strings.Repeat("é", 32), strings.Repeat("é", 32), ""},
		{"empty", "   ", "", "name must not be empty."},
		{"too long", strings.Repeat("a", 33), "", "name must be at most 32 characters."},
		{"control", "A\x07nn", "", "name must not contain control characters."},
		{"invalid UTF-8", "A\xffnn", "", "name must be valid UTF-8."},
		{"zero-width spaces only", "\u200b\u200b\u200b", "", "name must contain a visible character."},
		{"joiners, BOM and a filler", "\u200d\ufeff\u3164\u2060", "", "name must contain a visible character."},
		{"combining mark alone", "\u0301", "", "name must contain a visible character."},
		{"right-to-left override", "Ann\u202egnp.exe", "", "name must not contain text-direction overrides."},
		{"isolate", "\u2067Ann", "", "name must not contain text-direction overrides."},
		{"zero-width joiner inside a name", "Ann\u200dBell", "Ann\u200dBell", ""},
		{"right-to-left script", "سارا", "سارا", ""},
		{"accents", "Zoë Ångström", "Zoë Ångström", ""},
		{"emoji sequence with a joiner", "Ann ❤️\u200d🔥", "Ann ❤️\u200d🔥", ""},
		{"non-joiner in Persian", "می\u200cخواهم", "می\u200cخواهم", ""},
		{"zero-width space inside", "Ann\u200bBell", "", "name must not contain invisible characters."},
		{"soft hyphen", "Ann\u00adBell", "", "name must not contain invisible characters."},
		{"word joiner", "A\u2060nn", "", "name must not contain invisible characters."},
		{"trailing joiner", "Ann\u200d", "", "name must not contain invisible characters."},
		{"two joiners", "Ann\u200d\u200dBell", "", "name must not contain invisible characters."},
		{"Hangul filler inside", "Ann\u3164Bell", "", "name must not contain invisible characters."},
		{"tag characters", "Ann\U000E0041\U000E0042", "", "name must not contain invisible characters."},
		{"variation selector supplement", "Ann\U000E0100", "", "name must not contain invisible characters."},
		{"noncharacter U+FDD0", "Ann\ufdd0", "", "name must not contain Unicode noncharacters."},
		{"noncharacter U+FFFE", "\ufffeAnn", "", "name must not contain Unicode noncharacters."},
		{"noncharacter U+10FFFF", "Ann\U0010ffff", "", "name must not contain Unicode noncharacters."},
		{"replacement character is a character", "Ann\ufffd", "Ann\ufffd", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CleanName("name", tc.in, MaxNameLen)
			if tc.err != "" {
				if ErrorCode(err) != EINVALID || ErrorMessage(err) != tc.err {
					t.Errorf("CleanName(%q) error = %v, want EINVALID %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("CleanName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestCleanText(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, err string
	}{
		{"newlines and tabs", " A smith.\n\tBorn poor. ", "A smith.\n\tBorn poor.", ""},
		{"empty", "", "", ""},
		{"emoji and accents", "Café 🍺 for Zoë! 👨\u200d👩\u200d👧", "Café 🍺 for Zoë! 👨\u200d👩\u200d👧", ""},
		{"zero-width space between words", "a\u200bb", "a\u200bb", ""},
		{"right-to-left marks", "\u200fשלום\u200f", "\u200fשלום\u200f", ""},
		{"too long", strings.Repeat("x", MaxBackstoryLen+1), "", "backstory must be at most 2000 characters."},
		{"NUL", "a\x00b", "", "backstory must not contain control characters."},
		{"invalid UTF-8", "caf\xe9", "", "backstory must be valid UTF-8."},
		{"a surrogate's UTF-8 bytes", "a\xed\xa0\x80b", "", "backstory must be valid UTF-8."},
		{"zero-width only", "\u200b\u200d\u2060\ufeff", "", "backstory must contain a visible character."},
		{"filler only", " \u3164 ", "", "backstory must contain a visible character."},
		{"override", "I attack the \u202egoblin", "", "backstory must not contain text-direction overrides."},
		{"isolate", "\u2066left\u2069", "", "backstory must not contain text-direction overrides."},
		{"noncharacter U+FDD0", "hi\ufdd0", "", "backstory must not contain Unicode noncharacters."},
		{"noncharacter U+FFFF", "hi\uffff", "", "backstory must not contain Unicode noncharacters."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CleanText("backstory", tc.in, MaxBackstoryLen)
			if tc.err != "" {
				if ErrorCode(err) != EINVALID || ErrorMessage(err) != tc.err {
					t.Errorf("CleanText(%q) error = %v, want EINVALID %q", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("CleanText(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"plain", `{"text":"hello"}`, true},
		{"escapes", `{"text":"a\"b\\c\n\u00e9\u200b"}`, true},
		{"surrogate pair", `{"text":"\ud83c\udf7a"}`, true},
		{"surrogate pair in capitals", `{"text":"\uD83C\uDF7A"}`, true},
		{"escaped backslash before u", `{"text":"\\ud800"}`, true},
		{"literal replacement character", `{"text":"\ufffd �"}`, true},
		{"lone high surrogate", `{"text":"\ud800"}`, false},
		{"lone high surrogate at the end", `"\ud800`, false},
		{"lone low surrogate", `{"text":"\udc00x"}`, false},
		{"high then text", `{"text":"\ud800x\udc00"}`, false},
		{"two high surrogates", `{"text":"\ud800\ud800"}`, false},
		{"lone surrogate in a key", `{"\uDBFF":1}`, false},
		{"after an escaped backslash", `{"text":"\\\ud800"}`, false},
		{"invalid UTF-8", "{\"text\":\"caf\xe9\"}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckJSON([]byte(tc.in))
			if tc.ok && err != nil {
				t.Errorf("CheckJSON(%s) = %v, want nil", tc.in, err)
			}
			if !tc.ok && ErrorCode(err) != EINVALID {
				t.Errorf("CheckJSON(%s) = %v, want EINVALID", tc.in, err)
			}
		})
	}
}

func TestTableSpecValidate(t *testing.T) {
	ints := func(n int) *int { return &n }
	advs := []string{"ashfall", "mill"}
	t.Run("defaults", func(t *testing.T) {
		got, err := TableSpec{Name: " Friday "}.Validate(advs)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Friday" || got.Adventure != "" || got.Ruleset != RulesetD100 || got.CombatMode != CombatTactical ||
			*got.Seats != DefaultSeats || *got.TurnTimeoutS != DefaultTurnTimeoutS {
			t.Errorf("got %+v seats %d timeout %d", got, *got.Seats, *got.TurnTimeoutS)
		}
	})
	t.Run("settings", func(t *testing.T) {
		got, err := TableSpec{Name: "Grim", Adventure: "mill", Ruleset: RulesetD20, CombatMode: CombatNarrative, Seats: ints(2), TurnTimeoutS: ints(0)}.Validate(advs)
		if err != nil || got.Adventure != "mill" || got.Ruleset != RulesetD20 || got.CombatMode != CombatNarrative || *got.Seats != 2 || *got.TurnTimeoutS != 0 {
			t.Errorf("got %+v, %v", got, err)
		}
	})
	for _, tc := range []struct {
		name string
		spec TableSpec
		msg  string
	}{
		{"no name", TableSpec{}, "name must not be empty."},
		{"name too long", TableSpec{Name: strings.Repeat("n", 65)}, "name must be at most 64 characters."},
		{"unknown adventure", TableSpec{Name: "T", Adventure: "nowhere"}, `Unknown adventure "nowhere"; known: ashfall, mill.`},
		{"bad ruleset", TableSpec{Name: "T", Ruleset: "d30"}, `ruleset must be "d100" or "d20".`},
		{"bad combat mode", TableSpec{Name: "T", CombatMode: "chaotic"}, `combat_mode must be "tactical" or "narrative".`},
		{"zero seats", TableSpec{Name: "T", Seats: ints(0)}, "seats must be between 1 and 8."},
		{"nine seats", TableSpec{Name: "T", Seats: ints(9)}, "seats must be between 1 and 8."},
		{"negative timeout", TableSpec{Name: "T", TurnTimeoutS: ints(-1)}, "turn_timeout_s must be between 0 and 3600."},
		{"timeout too long", TableSpec{Name: "T", TurnTimeoutS: ints(3601)}, "turn_timeout_s must be between 0 and 3600."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Validate(advs)
			if ErrorCode(err) != EINVALID || ErrorMessage(err) != tc.msg {
				t.Errorf("error = %v, want EINVALID %q", err, tc.msg)
			}
		})
	}
}

func TestNewCharacterSpecValidate(t *testing.T) {
	classes := []Class{{ID: "warrior"}, {ID: "rogue"}}
	got, err := NewCharacterSpec{Name: " Brunhild ", Class: " rogue ", Backstory: " A smith's daughter. "}.Validate(classes)
	if err != nil || got != (NewCharacterSpec{Name: "Brunhild", Class: "rogue", Backstory: "A smith's daughter."}) {
		t.Errorf("got %+v, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		spec NewCharacterSpec
		msg  string
	}{
		{"no name", NewCharacterSpec{}, "character name must not be empty."},
		{"long backstory", NewCharacterSpec{Name: "V", Backstory: strings.Repeat("b", 2001)}, "backstory must be at most 2000 characters."},
		{"unknown class", NewCharacterSpec{Name: "V", Class: "bard"}, `Unknown class "bard"; pick one of: warrior, rogue.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.spec.Validate(classes)
			if ErrorCode(err) != EINVALID || ErrorMessage(err) != tc.msg {
				t.Errorf("error = %v, want EINVALID %q", err, tc.msg)
			}
		})
	}
}
