package engine

import (
	"math"
	"testing"
)

func TestMod(t *testing.T) {
	for v, want := range map[int]int{1: -5, 3: -4, 8: -1, 9: -1, 10: 0, 11: 0, 12: 1, 15: 2, 18: 4, 20: 5} {
		if got := Mod(v); got != want {
			t.Errorf("Mod(%d) = %d, want %d", v, got, want)
		}
	}
}

func TestD100Attack(t *testing.T) {
	sword := Weapon{Name: "Sword", Damage: 10}
	att := Fighter{Name: "A", Stats: Stats{AGI: 14}, Weapon: sword}                 // mod +2
	def := Fighter{Name: "D", Stats: Stats{AGI: 12}, Armour: Armour{Absorption: 2}} // mod +1
	cases := []struct {
		name       string
		atk, dfn   int // natural d100 rolls
		attacker   Fighter
		defender   Fighter
		hit, crit  bool
		fumble     bool
		damage     int
		atkT, defT int
	}{
		{name: "hit: weapon + diff/10 - armour", atk: 60, dfn: 40, attacker: att, defender: def, hit: true, damage: 10 + 21/10 - 2, atkT: 62, defT: 41},
		{name: "miss", atk: 30, dfn: 50, attacker: att, defender: def, atkT: 32, defT: 51},
		{name: "tie misses", atk: 40, dfn: 41, attacker: att, defender: def, atkT: 42, defT: 42},
		{name: "crit beats a higher defence, double damage", atk: 95, dfn: 99, attacker: att, defender: def, hit: true, crit: true, damage: 10*2 - 2, atkT: 97, defT: 100},
		{name: "crit with margin", atk: 97, dfn: 10, attacker: att, defender: def, hit: true, crit: true, damage: (10+88/10)*2 - 2, atkT: 99, defT: 11},
		{name: "fumble misses whatever the defence", atk: 5, dfn: 1, attacker: att, defender: def, fumble: true, atkT: 7, defT: 2},
		{name: "natural 6 is not a fumble", atk: 6, dfn: 1, attacker: att, defender: def, hit: true, damage: 10 + 0 - 2, atkT: 8, defT: 2}, // diff 6 adds 6/10 = 0,
		{name: "armour absorbs everything", atk: 50, dfn: 40, attacker: Fighter{Name: "A", Weapon: Weapon{Damage: 2}, Stats: Stats{AGI: 10}}, defender: Fighter{Name: "D", Stats: Stats{AGI: 10}, Armour: Armour{Absorption: 4}}, hit: true, damage: 0, atkT: 50, defT: 40},
		{name: "defending adds 20", atk: 60, dfn: 40, attacker: att, defender: Fighter{Name: "D", Stats: Stats{AGI: 12}, Statuses: []string{StatusDefending}}, atkT: 62, defT: 61, hit: true, damage: 10},
		{name: "off balance takes 20", atk: 60, dfn: 40, attacker: Fighter{Name: "A", Stats: Stats{AGI: 14}, Weapon: sword, Statuses: []string{StatusOffBalance}}, defender: def, atkT: 42, defT: 41, hit: true, damage: 10 - 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ScriptedDice(c.atk, c.dfn)
			r := D100{}.Attack(d, c.attacker, c.defender, 0)
			if r.Hit != c.hit || r.Crit != c.crit || r.Fumble != c.fumble || r.Damage != c.damage || r.Attack != c.atkT || r.Defence != c.defT {
				t.Errorf("got %+v, want hit=%v crit=%v fumble=%v damage=%d attack=%d defence=%d", r, c.hit, c.crit, c.fumble, c.damage, c.atkT, c.defT)
			}
			if len(d.Log) != 2 || d.Log[0].Notation != Notation(1, 100, d.Log[0].Modifier) {
				t.Errorf("want two recorded 1d100 rolls, got %+v", d.Log)
			}
		})
	}
}

func TestD100Advantage(t *testing.T) {
	a := Fighter{Name: "A", Stats: Stats{AGI: 10}, Weapon: Weapon{Damage: 5}}
	d := Fighter{Name: "D", Stats: Stats{AGI: 10}}
	if r := (D100{}).Attack(ScriptedDice(40, 50), a, d, 1); !r.Hit || r.Attack != 60 {
		t.Errorf("advantage: got %+v, want a hit at 60", r)
	}
	if r := (D100{}).Attack(ScriptedDice(60, 50), a, d, -1); r.Hit || r.Attack != 40 {
		t.Errorf("disadvantage: got %+v, want a miss at 40", r)
	}
}

func TestD20Attack(t *testing.T) {
	att := Fighter{Name: "A", Level: 1, Stats: Stats{STR: 16, AGI: 10}, Weapon: Weapon{Name: "Sword", Dice: "1d8"}} // +3 STR, +2 prof
	dfn := Fighter{Name: "D", Armour: Armour{AC: 15}}
	cases := []struct {
		name   string
		rolls  []int
		hit    bool
		crit   bool
		fumble bool
		damage int
	}{
		{name: "meets AC hits", rolls: []int{10, 6}, hit: true, damage: 6 + 3},
		{name: "below AC misses", rolls: []int{9}},
		{name: "natural 20 doubles the dice", rolls: []int{20, 4, 5}, hit: true, crit: true, damage: 4 + 5 + 3},
		{name: "natural 1 misses", rolls: []int{1}, fumble: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ScriptedDice(c.rolls...)
			r := D20{}.Attack(d, att, dfn, 0)
			if r.Hit != c.hit || r.Crit != c.crit || r.Fumble != c.fumble || r.Damage != c.damage {
				t.Errorf("got %+v, want hit=%v crit=%v fumble=%v damage=%d", r, c.hit, c.crit, c.fumble, c.damage)
			}
			if d.Remaining() != 0 {
				t.Errorf("%d scripted rolls unused", d.Remaining())
			}
		})
	}
}

func TestDiceReproducible(t *testing.T) {
	a, b := NewDice(7), NewDice(7)
	for i := range 100 {
		if x, y := a.Die(100), b.Die(100); x != y {
			t.Fatalf("roll %d: %d != %d with the same seed", i, x, y)
		}
	}
	// A restored generator continues the same sequence.
	saved := a.State()
	want := []int{a.Die(20), a.Die(20), a.Die(20)}
	r, err := RestoreDice(saved)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if got := r.Die(20); got != w {
			t.Errorf("restored roll %d = %d, want %d", i, got, w)
		}
	}
	if saved.Draws != 100 {
		t.Errorf("draws = %d, want 100", saved.Draws)
	}
}

func TestDiceFair(t *testing.T) {
	// Chi-square goodness of fit over seeded rolls: with 99 degrees of
	// freedom the 0.999 quantile is about 148.2; 19 d.o.f.: 43.8.
	for _, c := range []struct {
		sides int
		limit float64
	}{{100, 148.2}, {20, 43.8}} {
		d := NewDice(12345)
		n := 200 * c.sides
		counts := make([]int, c.sides)
		for range n {
			counts[d.Die(c.sides)-1]++
		}
		exp := float64(n) / float64(c.sides)
		chi := 0.0
		for _, o := range counts {
			chi += math.Pow(float64(o)-exp, 2) / exp
		}
		if chi > c.limit {
			t.Errorf("d%d: chi-square %.1f > %.1f", c.sides, chi, c.limit)
		}
	}
}

func TestParseNotation(t *testing.T) {
	for s, want := range map[string][3]int{"1d100": {1, 100, 0}, "2d6+3": {2, 6, 3}, "1D20-1": {1, 20, -1}, " 2d4 + 2 ": {2, 4, 2}} {
		n, sides, mod, err := ParseNotation(s)
		if err != nil || [3]int{n, sides, mod} != want {
			t.Errorf("ParseNotation(%q) = %d,%d,%d,%v, want %v", s, n, sides, mod, err, want)
		}
	}
	for _, bad := range []string{"", "d6", "2d", "2d1", "0d6", "x", "1d6+"} {
		if _, _, _, err := ParseNotation(bad); err == nil {
			t.Errorf("ParseNotation(%q): want an error", bad)
		}
	}
}

func TestInitiativeRolls(t *testing.T) {
	f := Fighter{Name: "F", Stats: Stats{AGI: 15}} // +2
	if r := (D100{}).Initiative(ScriptedDice(57), f); r.Total != 59 || r.Notation != "1d100+2" || r.Purpose != "initiative" {
		t.Errorf("d100 initiative %+v", r)
	}
	if r := (D20{}).Initiative(ScriptedDice(13), f); r.Total != 15 || r.Notation != "1d20+2" {
		t.Errorf("d20 initiative %+v", r)
	}
}

func TestPotionPerRuleset(t *testing.T) {
	for _, c := range []struct {
		ruleset string
		rolls   []int
		healed  int
	}{
		{RulesetD100, []int{4, 6}, 4 + 6 + 5}, // 2d10+5
		{RulesetD20, []int{3, 1}, 3 + 1 + 2},  // 2d4+2
	} {
		t.Run(c.ruleset, func(t *testing.T) {
			st := NewState(Config{Ruleset: c.ruleset}, testAdventure(), testCatalogue(), 1)
			if _, err := st.AddCharacter(NewDice(1), "c1", "1", "p1", NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
				t.Fatal(err)
			}
			st.MoveParty(NewDice(1), "", "den")
			if _, _, err := st.StartCombat(NewDice(1), []string{"boss"}); err != nil {
				t.Fatal(err)
			}
			st.Party[0].HP = 1
			out, _, err := st.UseItem(ScriptedDice(c.rolls...), "pc:1", "c1-kit-1", "")
			if err != nil || out.Amount != c.healed {
				t.Errorf("healed %d (%v), want %d", out.Amount, err, c.healed)
			}
		})
	}
}

func TestD20HitPointsFromCatalogue(t *testing.T) {
	st := NewState(Config{Ruleset: RulesetD20}, testAdventure(), testCatalogue(), 1)
	c, err := st.AddCharacter(NewDice(1), "c1", "1", "p1", NewCharacterSpec{Name: "A", Class: "warrior"})
	if err != nil || c.MaxHP != 12 {
		t.Errorf("d20 warrior HP %d (%v), want the class's hp_d20 12", c.MaxHP, err)
	}
}

// An advantage roll reads right: keep notation, the kept die, and a total
// of kept die + modifier; the attack roll carries its target and outcome.
func TestAdvantageRollRecord(t *testing.T) {
	a := Fighter{Name: "Tamsin", Level: 1, Stats: Stats{STR: 14}, Weapon: Weapon{Name: "sword", Dice: "1d8"}}
	tg := Fighter{Name: "Goblin", Armour: Armour{AC: 13}}
	for _, tc := range []struct {
		adv      int
		dice     []int
		notation string
		kept     int
		outcome  string
	}{
		{1, []int{3, 14, 5}, "2d20kh1+4", 14, "hit"},
		{-1, []int{3, 14}, "2d20kl1+4", 3, "miss"},
		{1, []int{20, 2, 4, 4}, "2d20kh1+4", 20, "crit"},
		{0, []int{1}, "1d20+4", 0, "fumble"},
	} {
		d := ScriptedDice(tc.dice...)
		(D20{}).Attack(d, a, tg, tc.adv)
		r := d.Log[0]
		if r.Notation != tc.notation || r.Kept != tc.kept || r.Outcome != tc.outcome || r.Against != 13 {
			t.Errorf("adv %d dice %v: %+v; want %s kept %d %s against 13", tc.adv, tc.dice, r, tc.notation, tc.kept, tc.outcome)
		}
		if tc.kept != 0 && r.Total != r.Kept+r.Modifier {
			t.Errorf("adv %d: total %d is not kept %d + modifier %d", tc.adv, r.Total, r.Kept, r.Modifier)
		}
	}
	d := ScriptedDice(60, 40)
	(D100{}).Attack(d, Fighter{Name: "A", Weapon: Weapon{Damage: 5}}, Fighter{Name: "B"}, 0)
	if r := d.Log[0]; r.Outcome != "hit" || r.Against != d.Log[1].Total || d.Log[1].Outcome != "" {
		t.Errorf("d100 attack record: %+v / %+v", r, d.Log[1])
	}
}
