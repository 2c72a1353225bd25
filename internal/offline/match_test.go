package offline

import (
	"testing"

	"tavern/internal/agent"
)

// TestCarriedPicksTheBestNamedItem: the item whose name the words name
// most, the first of equals, and none when no word matches.
func TestCarriedPicksTheBestNamedItem(t *testing.T) {
	p := &agent.PartyMember{Items: []agent.ItemRef{
		{ID: "p1", Name: "Healing potion"}, {ID: "p2", Name: "Greater healing potion"}, {ID: "r1", Name: "Coil of rope"}, {ID: "r2", Name: "Rope"},
	}}
	for _, c := range []struct{ words, want string }{
		{"I drink the greater healing potion", "p2"},
		{"I drop the potion", "p1"},
		{"give Mira my rope", "r1"},
		{"I sell the lantern", ""},
	} {
		if got := carried(p, tokens(c.words)); got != c.want {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
}
