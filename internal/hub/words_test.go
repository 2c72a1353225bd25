package hub

import (
	"testing"

	"tavern/internal/engine"
)

// A model's narration at a words table loses the hit points it wrote.
func TestRedactNarrationNumbers(t *testing.T) {
	a := &access{words: true}
	for in, want := range map[string]string{
		"Snikket staggers (4/14 HP).":              "Snikket staggers.",
		"Snikket has 4/14 HP left.":                "Snikket has  left.",
		"The goblin is down to 3 HP.":              "The goblin is down to .",
		"He has 12 hit points.":                    "He has .",
		"Three goblins and 2 wolves circle.":       "Three goblins and 2 wolves circle.",
		"Round 2. Rotfang brute (wounded) growls.": "Round 2. Rotfang brute (wounded) growls.",
	} {
		e, _ := a.redact(engine.NarrationEvent(engine.AgentCombat, in, nil, ""))
		if got := e.Data.(engine.NarrationData).Text; got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	exact := &access{}
	if e, changed := exact.redact(engine.NarrationEvent(engine.AgentCombat, "Snikket (4/14 HP)", nil, "")); changed || e.Data.(engine.NarrationData).Text != "Snikket (4/14 HP)" {
		t.Errorf("an exact table's narration changed")
	}
}
