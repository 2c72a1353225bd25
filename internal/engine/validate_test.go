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
	if got, err := CleanText("backstory", " A smith.\n\tBorn poor. ", MaxBackstoryLen); err != nil || got != "A smith.\n\tBorn poor." {
		t.Errorf("newlines and tabs: %q, %v", got, err)
	}
	if got, err := CleanText("backstory", "", MaxBackstoryLen); err != nil || got != "" {
		t.Errorf("empty: %q, %v", got, err)
	}
	if _, err := CleanText("backstory", strings.Repeat("x", MaxBackstoryLen+1), MaxBackstoryLen); ErrorCode(err) != EINVALID {
		t.Errorf("too long: %v", err)
	}
	if _, err := CleanText("backstory", "a\x00b", MaxBackstoryLen); ErrorCode(err) != EINVALID {
		t.Errorf("NUL: %v", err)
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
