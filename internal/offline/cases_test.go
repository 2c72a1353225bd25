package offline_test

import (
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// The offline narrator cases that every new user meets
// first.

func TestOfflinePotionOutsideCombatHeals(t *testing.T) {
	g := newGame(t)
	aldric := g.st.Party[0]
	g.play(agent.TurnPlayer, aldric, "I go to Market Lane")
	aldric.Gold = 100
	g.play(agent.TurnPlayer, aldric, "I buy a potion from Tobin")
	if !hasItem(g, aldric, "Healing potion") {
		t.Fatalf("no potion bought: %q", g.log[len(g.log)-1])
	}
	aldric.HP = 3
	potions := countItems(g, aldric, "Healing potion")
	res := g.play(agent.TurnPlayer, aldric, "I drink the healing potion")
	if aldric.HP <= 3 || countItems(g, aldric, "Healing potion") != potions-1 || !strings.Contains(res.Output.Narration, "HP") {
		t.Fatalf("drinking a potion outside combat: HP %d, potions %d -> %d; %q", aldric.HP, potions, countItems(g, aldric, "Healing potion"), res.Output.Narration)
	}
}

func TestOfflineBuyAPotionBuysAPotion(t *testing.T) {
	g := newGame(t)
	aldric := g.st.Party[0]
	g.play(agent.TurnPlayer, aldric, "I go to Market Lane")
	aldric.Gold = 100
	res := g.play(agent.TurnPlayer, aldric, "buy a potion")
	if !hasItem(g, aldric, "Healing potion") || !strings.Contains(strings.ToLower(res.Output.Narration), "potion") {
		t.Fatalf("buy a potion: %q; inventory %v", res.Output.Narration, itemNames(g, aldric))
	}
}

func TestOfflineUnknownTopicSaysWhatTheNPCKnows(t *testing.T) {
	g := newGame(t)
	aldric := g.st.Party[0]
	g.play(agent.TurnPlayer, aldric, "I go to the Crooked Lantern inn")
	first := g.play(agent.TurnPlayer, aldric, "ask Maren about the weather in distant lands").Output.Narration
	second := g.play(agent.TurnPlayer, aldric, "ask Maren about her favourite colour").Output.Narration
	if !strings.Contains(second, "Maren") || !strings.Contains(strings.ToLower(second), "ask") {
		t.Errorf("an unknown topic should say what Maren can talk about: %q", second)
	}
	t.Logf("first: %q\nsecond: %q", first, second)
}

// A character without a backstory still arrives: who they are and their
// class, where they arrive and what they see there; nothing is invented
// for them (no heirlooms, no relatives), and the hints say what to do.
func TestOfflineArrivalWithoutBackstory(t *testing.T) {
	for _, backstory := range []string{"", "  \n"} {
		g := newGame(t)
		aldric := g.st.Party[0]
		start := g.st.World.Locations[g.st.Game.Location]
		npcs, items := len(g.st.World.NPCs), len(g.st.Inventory(aldric.ID))
		res := g.play(agent.TurnStart, aldric, backstory)
		n := res.Output.Narration
		t.Logf("start: %q; hints %v", n, res.Output.Hints)
		for _, want := range []string{"Aldric the warrior arrives in " + start.Name, start.Description, "Ways on: "} {
			if !strings.Contains(n, want) {
				t.Errorf("backstory %q: the arrival lacks %q: %q", backstory, want, n)
			}
		}
		for _, avoid := range []string{"memories", "waits for you"} {
			if strings.Contains(n, avoid) {
				t.Errorf("backstory %q: the arrival invents %q: %q", backstory, avoid, n)
			}
		}
		if len(g.st.World.NPCs) != npcs || len(g.st.Inventory(aldric.ID)) != items {
			t.Errorf("backstory %q: NPCs %d -> %d, items %d -> %d; nothing should be made", backstory, npcs, len(g.st.World.NPCs), items, len(g.st.Inventory(aldric.ID)))
		}
		if res.Output.Tool != "respond" || len(res.Output.Hints) == 0 {
			t.Errorf("backstory %q: output %+v; want a respond with hints", backstory, res.Output)
		}
	}
}

// With a backstory the arrival says the same, and names what it made.
func TestOfflineArrivalWithBackstory(t *testing.T) {
	g := newGame(t)
	aldric := g.st.Party[0]
	start := g.st.World.Locations[g.st.Game.Location]
	n := g.play(agent.TurnStart, aldric, "I carry my father's old sword. My sister Mira worries for me.").Output.Narration
	for _, want := range []string{"Aldric the warrior arrives in " + start.Name, start.Description, "father's old sword", "your sister Mira"} {
		if !strings.Contains(n, want) {
			t.Errorf("the arrival lacks %q: %q", want, n)
		}
	}
}

func TestCommonClassNames(t *testing.T) {
	for name, want := range map[string]string{"fighter": "warrior", "Wizard": "mage", "thief": "rogue", "priest": "cleric"} {
		g := newGame(t)
		c, err := g.st.AddCharacter(g.dice, "c9", "9", "p", engine.NewCharacterSpec{Name: "Odo", Class: name})
		if err != nil || c.Class != want {
			t.Errorf("class %q: %v, %v; want %s", name, c, err, want)
		}
	}
}

func countItems(g *game, c *engine.Character, name string) int {
	n := 0
	for _, it := range g.st.Inventory(c.ID) {
		if it.Name == name {
			n++
		}
	}
	return n
}

func hasItem(g *game, c *engine.Character, name string) bool {
	for _, it := range g.st.Inventory(c.ID) {
		if it.Name == name {
			return true
		}
	}
	return false
}

func itemNames(g *game, c *engine.Character) []string {
	var out []string
	for _, it := range g.st.Inventory(c.ID) {
		out = append(out, it.Name)
	}
	return out
}

// A backstory heirloom weapon is made with its buff and equipped: the
// sheet names it, and the rules use its weapon.
func TestOfflineHeirloomEquipped(t *testing.T) {
	g := newGame(t)
	aldric := g.st.Party[0]
	aldric.Weapon = "dagger"
	g.play(agent.TurnStart, aldric, "I carry my father's old sword.")
	it := g.st.WieldedItem(aldric, "weapon")
	if it == nil || !strings.Contains(strings.ToLower(it.Name), "sword") || len(it.Buffs) == 0 || aldric.Weapon != "longsword" {
		t.Fatalf("heirloom wielded: %+v, weapon %s; inventory %v", it, aldric.Weapon, itemNames(g, aldric))
	}
}

// "buy a potion" where nobody sells says so, rather than buying whatever
// comes first.
func TestOfflineBuyWhereNobodySells(t *testing.T) {
	for _, where := range []string{"", "I go to the Crooked Lantern inn"} {
		g := newGame(t)
		a := g.st.Party[0]
		a.Gold = 100
		if where != "" {
			g.play(agent.TurnPlayer, a, where)
		}
		before := len(g.st.Inventory(a.ID))
		res := g.play(agent.TurnPlayer, a, "buy a potion")
		if len(g.st.Inventory(a.ID)) != before || a.Gold != 100 || !strings.Contains(res.Output.Narration, "merchant") {
			t.Errorf("%q then buy a potion: %q; gold %d", where, res.Output.Narration, a.Gold)
		}
	}
}

// The seeded item templates (bread, a torch, a traveller's cape, an iron
// sword) are sold where the adventure stocks them, at their catalogue
// price, and do what their kind does once bought.
func TestOfflineSeededItems(t *testing.T) {
	for _, tc := range []struct {
		name, where, buy, item string
		price                  int
		use                    string
		// check looks at the character after use and its narration.
		check func(g *game, c *engine.Character, narration string) string
	}{
		{"bread from the merchant", "I go to Market Lane", "buy bread from Tobin", "Bread", 1, "I eat the bread",
			func(g *game, c *engine.Character, n string) string {
				if c.HP <= 10 || hasItem(g, c, "Bread") || !strings.Contains(n, "bread") || !strings.Contains(n, "HP") {
					return "the bread is not eaten for a few HP"
				}
				return ""
			}},
		{"bread at the inn", "I go to the Crooked Lantern inn", "buy some bread", "Bread", 1, "munch the bread",
			func(g *game, c *engine.Character, n string) string {
				if c.HP <= 10 || countItems(g, c, "Bread") != 0 {
					return "the bread is not eaten for a few HP"
				}
				return ""
			}},
		{"torch", "I go to Market Lane", "I buy a torch", "Torch", 1, "I light the torch",
			func(g *game, c *engine.Character, n string) string {
				if !hasItem(g, c, "Torch") || c.HP != 10 || !strings.Contains(n, "the torch") || !strings.Contains(n, "light") {
					return "the torch is not lit (and kept)"
				}
				return ""
			}},
		{"torch used", "I go to Market Lane", "buy a torch from Tobin", "Torch", 1, "use the torch",
			func(g *game, c *engine.Character, n string) string {
				if !hasItem(g, c, "Torch") || !strings.Contains(n, "torch") || strings.Contains(n, "not something") {
					return "using the torch does not light it"
				}
				return ""
			}},
		{"traveller's cape", "I go to Market Lane", "buy the traveller's cape", "Traveller's cape", 3, "I wear the cape",
			func(g *game, c *engine.Character, n string) string {
				if !hasItem(g, c, "Traveller's cape") || c.Armour != "chain-mail" || !strings.Contains(n, "puts on the traveller's cape") {
					return "the cape is not put on over the chain mail"
				}
				return ""
			}},
		{"bread is not worn", "I go to the Crooked Lantern inn", "buy bread from Maren", "Bread", 1, "I wear the bread",
			func(g *game, c *engine.Character, n string) string {
				if !hasItem(g, c, "Bread") || strings.Contains(n, "puts on") || !strings.Contains(n, "neither a weapon nor armour") {
					return "bread is worn, or the engine's refusal is not said"
				}
				return ""
			}},
		{"iron sword", "I go to Market Lane", "buy the iron sword", "Iron sword", 12, "I wield the iron sword",
			func(g *game, c *engine.Character, n string) string {
				if c.Weapon != "iron-sword" || !strings.Contains(n, "Iron sword") {
					return "the iron sword is not wielded"
				}
				return ""
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGame(t)
			aldric := g.st.Party[0]
			g.play(agent.TurnPlayer, aldric, tc.where)
			aldric.Gold = 100
			bought := g.play(agent.TurnPlayer, aldric, tc.buy).Output.Narration
			if !hasItem(g, aldric, tc.item) || aldric.Gold != 100-tc.price {
				t.Fatalf("%q: %q; gold %d (want %d), inventory %v", tc.buy, bought, aldric.Gold, 100-tc.price, itemNames(g, aldric))
			}
			aldric.HP = 10
			n := g.play(agent.TurnPlayer, aldric, tc.use).Output.Narration
			if msg := tc.check(g, aldric, n); msg != "" {
				t.Errorf("%q: %s: %q; HP %d, inventory %v", tc.use, msg, n, aldric.HP, itemNames(g, aldric))
			}
		})
	}
}

// Words that name something to light which the character does not carry
// say so; a buyer asking for what an NPC does not sell hears what it does.
func TestOfflineNothingToLightOrBuy(t *testing.T) {
	for _, tc := range []struct{ name, where, text, want string }{
		{"no torch", "", "I light a torch", "carries no torch"},
		{"not sold at the inn", "I go to the Crooked Lantern inn", "buy a torch", "only bread (1 gold)"},
		{"not sold by the merchant", "I go to Market Lane", "buy a horse", "Tobin Quill has nothing like that to sell, only bread (1 gold)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGame(t)
			a := g.st.Party[0]
			if tc.where != "" {
				g.play(agent.TurnPlayer, a, tc.where)
			}
			gold, items := a.Gold, len(g.st.Inventory(a.ID))
			n := g.play(agent.TurnPlayer, a, tc.text).Output.Narration
			if !strings.Contains(n, tc.want) || a.Gold != gold || len(g.st.Inventory(a.ID)) != items {
				t.Errorf("%q: %q, want it to say %q and change nothing", tc.text, n, tc.want)
			}
		})
	}
}
