package engine

import "fmt"

// Ruleset names.
const (
	RulesetD100 = "d100"
	RulesetD20  = "d20"
)

// Fighter is what the rules need to know of a combatant, PC or NPC.
type Fighter struct {
	Name     string
	Level    int
	Stats    Stats
	Weapon   Weapon
	Armour   Armour
	Statuses []string
	// AttackStat, when set, is the stat its attack rolls with in place of
	// the weapon's (a spell's INT).
	AttackStat Stat
}

// mod is the modifier of f's stat.
func (f Fighter) mod(st Stat) int {
	v, _ := f.Stats.Of(st)
	return Mod(v)
}

// ByRuleset is what a rule rolls under each ruleset: dice notation for
// d100 and for d20 (empty: the d100 dice).
type ByRuleset struct{ D100, D20 string }

// AttackResult is the outcome of one attack roll.
type AttackResult struct {
	Hit    bool `json:"hit"`
	Crit   bool `json:"crit"`
	Fumble bool `json:"fumble"`
	Damage int  `json:"damage"`
	Attack int  `json:"attack"`
	// Defence is the defence roll total (d100) or the armour class (d20).
	Defence int `json:"defence"`
}

// outcome is the attack's result in a word: "crit", "fumble", "hit" or
// "miss".
func (r AttackResult) outcome() string {
	switch {
	case r.Crit:
		return "crit"
	case r.Fumble:
		return "fumble"
	case r.Hit:
		return "hit"
	}
	return "miss"
}

// Ruleset resolves the dice of one rules system. Both rulesets share the
// turn machine in combat.go; a ruleset only decides numbers.
type Ruleset interface {
	Name() string
	// InitiativeMod is the modifier added to a fighter's initiative die.
	InitiativeMod(f Fighter) int
	// Initiative rolls a fighter's initiative.
	Initiative(d *Dice, f Fighter) Roll
	// Attack resolves a's attack on t. adv is +1 (advantage), 0 or -1.
	Attack(d *Dice, a, t Fighter, adv int) AttackResult
	// Contest rolls a contested check of f's stat (AGI to flee or chase,
	// WIS to turn undead).
	Contest(d *Dice, f Fighter, stat Stat, purpose string) Roll
	// Dice is the notation b rolls under this ruleset.
	Dice(b ByRuleset) string
}

// RulesetByName returns the named ruleset; unknown names get d100.
func RulesetByName(name string) Ruleset {
	if name == RulesetD20 {
		return D20{}
	}
	return D100{}
}

// ValidRuleset reports whether name is a known ruleset.
func ValidRuleset(name string) bool { return name == RulesetD100 || name == RulesetD20 }

// D100 is seed 000's percentile system: initiative 1d100 + AGI modifier;
// attack 1d100 + AGI mod against defence 1d100 + AGI mod, hit if higher;
// damage = weapon damage + (attack - defence)/10 - armour absorption, at
// least 0; a natural 95+ is a critical hit (double damage before armour), a
// natural 5- a fumble (automatic miss, and the attacker is off balance:
// -20 on its next attack); advantage +20, disadvantage -20; a defending
// target adds +20 to its defence.
type D100 struct{}

// Name implements Ruleset.
func (D100) Name() string { return RulesetD100 }

// InitiativeMod implements Ruleset.
func (D100) InitiativeMod(f Fighter) int { return Mod(f.Stats.AGI) }

// Initiative implements Ruleset.
func (r D100) Initiative(d *Dice, f Fighter) Roll {
	return d.Roll(f.Name, "initiative", 1, 100, r.InitiativeMod(f))
}

// Attack implements Ruleset.
func (D100) Attack(d *Dice, a, t Fighter, adv int) AttackResult {
	st := StatAGI
	if a.AttackStat != "" {
		st = a.AttackStat
	}
	mod := a.mod(st) + 20*adv
	if HasStatus(a.Statuses, StatusOffBalance) {
		mod -= 20
	}
	atk := d.Roll(a.Name, fmt.Sprintf("attack on %s", t.Name), 1, 100, mod)
	defMod := Mod(t.Stats.AGI) + 20*guarded(t.Statuses)
	def := d.Roll(t.Name, fmt.Sprintf("defence against %s", a.Name), 1, 100, defMod)
	res := AttackResult{Attack: atk.Total, Defence: def.Total}
	nat := atk.Natural()
	switch {
	case nat <= 5:
		res.Fumble = true
	case nat >= 95:
		res.Crit, res.Hit = true, true
	default:
		res.Hit = atk.Total > def.Total
	}
	d.annotate(&atk, def.Total, res.outcome())
	if res.Hit {
		dmg := a.Weapon.Damage + max(0, atk.Total-def.Total)/10
		if res.Crit {
			dmg *= 2
		}
		res.Damage = max(0, dmg-t.Armour.Absorption)
	}
	return res
}

// Contest implements Ruleset.
func (D100) Contest(d *Dice, f Fighter, stat Stat, purpose string) Roll {
	return d.Roll(f.Name, purpose, 1, 100, f.mod(stat))
}

// Dice implements Ruleset.
func (D100) Dice(b ByRuleset) string { return b.D100 }

// D20 is seed 002's system: initiative d20 + AGI modifier; attack d20 +
// ability modifier (STR, AGI for ranged weapons, the better of the two
// for finesse weapons) + proficiency
// (2 + (level-1)/4) against the target's armour class; damage = the
// weapon's dice + the same ability modifier, at least 1 on a hit; a
// natural 20 always hits and rolls the damage dice twice; a natural 1
// always misses; advantage rolls 2d20 and keeps the higher, disadvantage
// the lower; a defending target has +2 AC. PCs fall unconscious at 0 HP.
type D20 struct{}

// Name implements Ruleset.
func (D20) Name() string { return RulesetD20 }

// InitiativeMod implements Ruleset.
func (D20) InitiativeMod(f Fighter) int { return Mod(f.Stats.AGI) }

// Initiative implements Ruleset.
func (r D20) Initiative(d *Dice, f Fighter) Roll {
	return d.Roll(f.Name, "initiative", 1, 20, r.InitiativeMod(f))
}

// AC is the d20 armour class of f.
func (D20) AC(f Fighter) int {
	ac := f.Armour.AC
	if ac == 0 {
		ac = 10
	}
	return ac + 2*guarded(f.Statuses)
}

// Attack implements Ruleset.
func (r D20) Attack(d *Dice, a, t Fighter, adv int) AttackResult {
	ability := Mod(a.Stats.STR)
	switch {
	case a.AttackStat != "":
		ability = a.mod(a.AttackStat)
	case a.Weapon.Ranged:
		ability = Mod(a.Stats.AGI)
	case a.Weapon.Finesse:
		ability = max(ability, Mod(a.Stats.AGI))
	}
	lvl := max(a.Level, 1)
	mod := ability + 2 + (lvl-1)/4
	if HasStatus(a.Statuses, StatusOffBalance) {
		adv--
	}
	purpose := fmt.Sprintf("attack on %s", t.Name)
	var atk Roll
	switch {
	case adv > 0:
		atk = d.RollKeep(a.Name, purpose+" (advantage)", 2, 20, mod, true)
	case adv < 0:
		atk = d.RollKeep(a.Name, purpose+" (disadvantage)", 2, 20, mod, false)
	default:
		atk = d.Roll(a.Name, purpose, 1, 20, mod)
	}
	ac := r.AC(t)
	res := AttackResult{Attack: atk.Total, Defence: ac}
	nat := atk.Total - mod
	switch {
	case nat == 1:
		res.Fumble = true
	case nat == 20:
		res.Crit, res.Hit = true, true
	default:
		res.Hit = atk.Total >= ac
	}
	d.annotate(&atk, ac, res.outcome())
	if res.Hit {
		n, sides, dmod, err := ParseNotation(a.Weapon.Dice)
		if err != nil {
			n, sides, dmod = 1, 2, 0
		}
		if res.Crit {
			n *= 2
		}
		dr := d.Roll(a.Name, fmt.Sprintf("damage to %s", t.Name), n, sides, dmod+ability)
		res.Damage = max(1, dr.Total)
	}
	return res
}

// Contest implements Ruleset.
func (D20) Contest(d *Dice, f Fighter, stat Stat, purpose string) Roll {
	return d.Roll(f.Name, purpose, 1, 20, f.mod(stat))
}

// Dice implements Ruleset.
func (D20) Dice(b ByRuleset) string {
	if b.D20 != "" {
		return b.D20
	}
	return b.D100
}

// guarded counts the guards on a defender: defending and shielded (shield
// wall, the shield spell) each make it harder to hit.
func guarded(st []string) int {
	n := 0
	if HasStatus(st, StatusDefending) {
		n++
	}
	if HasStatus(st, EffectShielded) {
		n++
	}
	return n
}

// XPForLevel is the total XP needed to reach level: 100, 300, 600, 1000…
func XPForLevel(level int) int { return 100 * (level - 1) * level / 2 }

// XPValue is the XP a defeated NPC of level is worth.
func XPValue(level int) int { return 50 * max(level, 1) }
