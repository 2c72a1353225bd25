package engine

import "testing"

// TestRulesetUsesTheStatItIsGiven: a contest rolls with the stat named,
// and an attack with its AttackStat in place of the weapon's.
func TestRulesetUsesTheStatItIsGiven(t *testing.T) {
	f := Fighter{Name: "Mage", Level: 1, Stats: Stats{STR: 8, AGI: 12, INT: 18, WIS: 14},
		Weapon: Weapon{Name: "Firebolt", Dice: "1d10", Ranged: true}}
	target := Fighter{Name: "Boss", Armour: Armour{AC: 30}}
	for _, rs := range []Ruleset{D100{}, D20{}} {
		t.Run(rs.Name(), func(t *testing.T) {
			if r := rs.Contest(ScriptedDice(5), f, StatWIS, "turn"); r.Modifier != 2 {
				t.Errorf("WIS contest modifier %d, want 2", r.Modifier)
			}
			if r := rs.Contest(ScriptedDice(5), f, StatAGI, "flee"); r.Modifier != 1 {
				t.Errorf("AGI contest modifier %d, want 1", r.Modifier)
			}
			spell := f
			spell.AttackStat = StatINT
			plain := rs.Attack(ScriptedDice(10, 10), f, target, 0)
			cast := rs.Attack(ScriptedDice(10, 10), spell, target, 0)
			// INT 18 is +4, AGI 12 is +1: the spell rolls 3 higher.
			if cast.Attack-plain.Attack != 3 {
				t.Errorf("attack %d with INT, %d with AGI: want 3 apart", cast.Attack, plain.Attack)
			}
		})
	}
}

// TestCataloguePrice: equipment has its catalogue price; anything else,
// or a nil catalogue, has none.
func TestCataloguePrice(t *testing.T) {
	cat := testCatalogue()
	cat.Weapons[0].Price = 15
	cat.Consumables[0].Price = 20
	for _, c := range []struct {
		cat  *Catalogue
		id   string
		want int
		ok   bool
	}{{cat, "sword", 15, true}, {cat, "potion", 20, true}, {cat, "mail", 0, true}, {cat, "crown", 0, false}, {nil, "sword", 0, false}} {
		if got, ok := c.cat.Price(c.id); got != c.want || ok != c.ok {
			t.Errorf("Price(%s) = %d, %v; want %d, %v", c.id, got, ok, c.want, c.ok)
		}
	}
}
