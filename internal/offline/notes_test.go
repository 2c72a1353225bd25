package offline

import (
	"strings"
	"testing"

	"tavern/internal/agent"
)

// The notes the narrator can read are names: "Old is called New".
func TestRenamesFromNotes(t *testing.T) {
	cases := []struct {
		name  string
		notes []string
		want  string
	}{
		{"called", []string{"The innkeeper is called Bram."}, "innkeeper>Bram"},
		{"named, quoted", []string{`Maren is named "Mags"`}, "Maren>Mags"},
		{"goes by", []string{"the Crooked Lantern inn goes by The Drunken Goose!"}, "Crooked Lantern inn>The Drunken Goose"},
		{"not a name", []string{"It snows all week.", "Aldric has 999 HP."}, ""},
		{"same name", []string{"Maren is called maren"}, ""},
		{"several", []string{"A is called B", "It rains.", "C is named D"}, "A>B,C>D"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := &offlineTurn{Ctx: agent.TurnContext{Notes: c.notes}}
			pairs := tr.renames()
			var got []string
			for i := 0; i+1 < len(pairs); i += 2 {
				got = append(got, pairs[i]+">"+pairs[i+1])
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("renames %q, want %q", g, c.want)
			}
		})
	}
}
