package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// abilityState is a fight in the den: a warrior (seat 1), a rogue (2), a
// mage (3) and a cleric (4) against Boss, Grunt and a skeleton, under
// ruleset. The cleric joins once the fight is on, and every foe is named
// when it starts, so that the foes are those of the adventure (no
// reinforcements, no scaling).
func abilityState(t *testing.T, ruleset string) *State {
	t.Helper()
	cat := testCatalogue()
	cat.Classes = append(cat.Classes,
		Class{ID: "mage", Name: "Mage", Stats: Stats{STR: 8, AGI: 13, CON: 11, INT: 17, WIS: 13}, HP: 28, HPD20: 7, Weapon: "knife"},
		Class{ID: "cleric", Name: "Cleric", Stats: Stats{STR: 13, AGI: 10, CON: 14, WIS: 16}, HP: 38, HPD20: 10, Weapon: "sword", Armour: "mail"})
	adv := testAdventure()
	adv.NPCs = append(adv.NPCs, NPC{ID: "skel", Name: "Skeleton", Kind: "skeleton", Undead: true, Location: "den", Hostile: true, Level: 1, HP: 9, HPD20: 6, Stats: Stats{AGI: 10, WIS: 6}, Weapon: "knife",
		Abilities: []string{"power_attack"}})
	st := NewState(Config{Ruleset: ruleset}, adv, cat, 7)
	d := NewDice(3)
	add := func(i int, class string) {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, NewCharacterSpec{Name: strings.ToUpper(class[:1]) + class[1:], Class: class}); err != nil {
			t.Fatal(err)
		}
	}
	for i, class := range []string{"warrior", "rogue", "mage"} {
		add(i, class)
	}
	if _, _, _, err := st.MoveParty(NewDice(1), "", "den"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"boss", "grunt", "skel"}); err != nil {
		t.Fatal(err)
	}
	add(3, "cleric")
	return st
}

func kinds(evs []Event) map[Kind]int {
	out := map[Kind]int{}
	for _, e := range evs {
		out[e.Kind]++
	}
	return out
}

func TestAbilities(t *testing.T) {
	type check func(t *testing.T, st *State, out AbilityOutcome, evs []Event)
	hp := func(st *State, ref string) int {
		if c := st.FindCharacter(ref); c != nil {
			return c.HP
		}
		return st.World.NPCs[ref].HP
	}
	cases := []struct {
		name, ruleset, actor, ability, target string
		script                                []int // nil: seeded dice
		setup                                 func(st *State)
		check                                 check
		refused                               string // a phrase of the refusal
	}{
		{name: "second wind heals 1d10+1 under d20", ruleset: RulesetD20, actor: "Warrior", ability: "second_wind", script: []int{7},
			setup: func(st *State) { st.Character("c1").HP = 2 },
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if got := st.Character("c1").HP; got != 10 {
					t.Errorf("HP %d; want 2+7+1", got)
				}
			}},
		{name: "second wind on a full warrior is refused", ruleset: RulesetD100, actor: "Warrior", ability: "Second wind", refused: "unhurt"},
		{name: "power attack adds 1d10 on a hit (d100)", ruleset: RulesetD100, actor: "Warrior", ability: "power attack", target: "Grunt",
			script: []int{60, 10, 10}, // attack 60+1 vs defence 10: hit, margin 51 → 10+5, +10 bonus, no armour
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if len(out.Hits) != 1 || out.Hits[0].Result.Damage != 25 {
					t.Fatalf("hits %+v; want one for 25", out.Hits)
				}
				if got := hp(st, "grunt"); got != 0 {
					t.Errorf("Grunt HP %d", got)
				}
			}},
		{name: "shield wall shields the party standing", ruleset: RulesetD20, actor: "Warrior", ability: "shield_wall",
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if len(out.Effects) != 4 || !HasStatus(st.Character("c3").Statuses, EffectShielded) {
					t.Errorf("effects %v", out.Effects)
				}
				if ac := (D20{}).AC(st.fighter(mustEntry(t, st, "Mage"))); ac != 10+2 {
					t.Errorf("shielded mage AC %d; want 12", ac)
				}
			}},
		{name: "sneak attack needs a friend on the target", ruleset: RulesetD20, actor: "Rogue", ability: "sneak_attack", target: "Boss", refused: "Hide first"},
		{name: "sneak attack names the foes a friend fights", ruleset: RulesetD20, actor: "Rogue", ability: "sneak_attack", target: "Boss",
			setup:   func(st *State) { st.engage(mustEntry(t, st, "Warrior"), mustEntry(t, st, "Grunt")) },
			refused: "sneak attack Grunt instead"},
		{name: "sneak attack adds 1d6 with a friend engaged", ruleset: RulesetD20, actor: "Rogue", ability: "sneak_attack", target: "Grunt",
			setup:  func(st *State) { st.engage(mustEntry(t, st, "Warrior"), mustEntry(t, st, "Grunt")) },
			script: []int{15, 3, 4}, // 15+0+2 vs AC 10: hit; 1d4+0 = 3; sneak 1d6 = 4
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if out.Hits[0].Result.Damage != 7 {
					t.Errorf("damage %d; want 7", out.Hits[0].Result.Damage)
				}
				if out.UsesLeft != 0 {
					t.Errorf("uses left %d", out.UsesLeft)
				}
			}},
		{name: "hide wins the contest and hides", ruleset: RulesetD100, actor: "Rogue", ability: "hide", script: []int{80, 20},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				r, g := mustEntry(t, st, "Rogue"), mustEntry(t, st, "Grunt")
				if !out.Success || st.attackAdvantage(g, r) != -1 || st.attackAdvantage(r, g) != 1 {
					t.Errorf("success %v, advantage on the rogue %d, of the rogue %d", out.Success, st.attackAdvantage(g, r), st.attackAdvantage(r, g))
				}
			}},
		{name: "disarm weakens on a won contest", ruleset: RulesetD20, actor: "Rogue", ability: "disarm", target: "Boss", script: []int{18, 2},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if !HasStatus(st.World.NPCs["boss"].Statuses, EffectWeakened) {
					t.Errorf("boss statuses %v", st.World.NPCs["boss"].Statuses)
				}
			}},
		{name: "firebolt uses INT and ignores armour (d100)", ruleset: RulesetD100, actor: "Mage", ability: "firebolt", target: "Boss",
			script: []int{50, 50}, // 50+3 vs 50+2: hit by 1: 9 damage, hide's 2 absorption ignored
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if d := out.Hits[0].Result.Damage; d != 9 {
					t.Errorf("damage %d; want 9", d)
				}
			}},
		{name: "magic missile never misses (d20 2d4+1)", ruleset: RulesetD20, actor: "Mage", ability: "magic_missile", target: "Boss", script: []int{1, 1},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if !out.Hits[0].Result.Hit || out.Hits[0].Result.Damage != 3 || out.UsesLeft != 1 {
					t.Errorf("outcome %+v", out)
				}
			}},
		{name: "sleep takes the weakest as far as the pool reaches", ruleset: RulesetD100, actor: "Mage", ability: "sleep", script: []int{8, 8, 8, 8, 8}, // 40: skeleton 9 + grunt 12, not Boss 20 more
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if strings.Join(out.Effects, ",") != "Skeleton,Grunt" {
					t.Fatalf("asleep %v", out.Effects)
				}
				// A blow wakes the sleeper, and hits with advantage first.
				if _, _, err := st.Attack(NewDice(1), "Warrior", "Grunt"); err != nil {
					t.Fatal(err)
				}
				if st.hasEffect(mustEntry(t, st, "Skeleton"), EffectAsleep) != true {
					t.Error("the skeleton woke without a blow")
				}
			}},
		{name: "shield wards the mage", ruleset: RulesetD100, actor: "Mage", ability: "shield",
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if !HasStatus(st.Character("c3").Statuses, EffectShielded) {
					t.Error("not shielded")
				}
			}},
		{name: "healing word reaches an ally", ruleset: RulesetD20, actor: "Cleric", ability: "healing_word", target: "Mage", script: []int{4},
			setup: func(st *State) { st.Character("c3").HP = 1 },
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if st.Character("c3").HP != 7 {
					t.Errorf("mage HP %d; want 7 (max)", st.Character("c3").HP)
				}
			}},
		{name: "healing word does not reach a foe", ruleset: RulesetD20, actor: "Cleric", ability: "healing_word", target: "Boss", refused: "allies: Warrior"},
		{name: "bless blesses three", ruleset: RulesetD100, actor: "Cleric", ability: "bless",
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if len(out.Effects) != 3 || out.Effects[0] != "Cleric" {
					t.Errorf("blessed %v", out.Effects)
				}
			}},
		{name: "turn undead stuns the skeleton", ruleset: RulesetD20, actor: "Cleric", ability: "turn_undead", script: []int{15, 3},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if strings.Join(out.Effects, ",") != "Skeleton" || !HasStatus(st.World.NPCs["skel"].Statuses, EffectStunned) {
					t.Errorf("turned %v", out.Effects)
				}
			}},
		{name: "turn undead does not reach an undead of higher level", ruleset: RulesetD20, actor: "Cleric", ability: "turn_undead",
			setup:   func(st *State) { st.World.NPCs["skel"].Level = 2 },
			refused: "only undead of level 1 or lower, and Skeleton (level 2) stands above it"},
		{name: "turn undead turns the lesser dead and leaves the greater", ruleset: RulesetD100, actor: "Cleric", ability: "turn_undead", script: []int{90, 5},
			setup: func(st *State) { st.Game.Undead = append(st.Game.Undead, "boss") }, // Boss is level 2
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if strings.Join(out.Effects, ",") != "Skeleton" || HasStatus(st.World.NPCs["boss"].Statuses, EffectStunned) {
					t.Errorf("turned %v; want only the skeleton", out.Effects)
				}
			}},
		{name: "turn undead without undead is refused", ruleset: RulesetD20, actor: "Cleric", ability: "turn_undead",
			setup:   func(st *State) { st.World.NPCs["skel"].HP = 0; st.World.NPCs["skel"].Statuses = []string{StatusDead} },
			refused: "no undead foe"},
		{name: "revive brings a fallen ally round", ruleset: RulesetD100, actor: "Cleric", ability: "revive", target: "Rogue",
			setup: func(st *State) {
				c := st.Character("c2")
				c.HP, c.Statuses = 0, []string{StatusUnconscious}
			},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if c := st.Character("c2"); !c.Conscious() || c.HP < 4 { // 2d8+2
					t.Errorf("rogue %d HP %v", c.HP, c.Statuses)
				}
			}},
		{name: "revive on one standing is refused", ruleset: RulesetD100, actor: "Cleric", ability: "revive", target: "Rogue", refused: "still standing"},
		{name: "an ability the class lacks is refused with the list", ruleset: RulesetD100, actor: "Warrior", ability: "sleep", target: "Boss", refused: "Second wind (second_wind, 1/1)"},
		{name: "a spent ability is refused with what is ready", ruleset: RulesetD100, actor: "Mage", ability: "sleep",
			setup:   func(st *State) { st.spendUse("c:c3", "sleep") },
			refused: "no use of Sleep left (a long rest restores it); ready: Firebolt"},
		{name: "a target out of the fight is refused", ruleset: RulesetD100, actor: "Mage", ability: "firebolt", target: "Baker", refused: "is not in this fight; foes standing:"},
		{name: "a fallen target is out of reach", ruleset: RulesetD100, actor: "Mage", ability: "magic missile", target: "Grunt",
			setup: func(st *State) {
				st.World.NPCs["grunt"].HP = 0
				st.World.NPCs["grunt"].Statuses = []string{StatusDead}
			}, refused: "out of reach"},
		{name: "an NPC uses its profile's ability", ruleset: RulesetD20, actor: "Skeleton", ability: "power_attack", target: "Mage", script: []int{19, 2, 3},
			check: func(t *testing.T, st *State, out AbilityOutcome, evs []Event) {
				if out.Hits[0].Result.Damage != 4 { // at least 1 (STR 0), and 1d6 = 3
					t.Errorf("damage %d", out.Hits[0].Result.Damage)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := abilityState(t, tc.ruleset)
			if tc.setup != nil {
				tc.setup(st)
			}
			d := NewDice(11)
			if tc.script != nil {
				d = ScriptedDice(tc.script...)
			}
			before := st.Clone()
			out, evs, err := st.UseAbility(d, tc.actor, tc.ability, tc.target)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err %v; want a refusal saying %q", err, tc.refused)
				}
				if mustJSONString(t, st) != mustJSONString(t, before) {
					t.Error("a refusal changed the state")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.script != nil && d.Remaining() != 0 {
				t.Errorf("%d scripted dice left unrolled", d.Remaining())
			}
			k := kinds(evs)
			if k[EventAbility] != 1 || evs[0].Kind != EventAbility {
				t.Errorf("events %v; want one ability event first", k)
			}
			if ad := evs[0].Data.(AbilityData); ad.UsesLeft != out.UsesLeft || ad.Actor != out.Actor {
				t.Errorf("ability event %+v for outcome %+v", ad, out)
			}
			if tc.script != nil && k[EventDice] == 0 {
				t.Error("no dice event for the rolls")
			}
			if tc.check != nil {
				tc.check(t, st, out, evs)
			}
		})
	}
}

func mustEntry(t *testing.T, st *State, name string) Combatant {
	t.Helper()
	e, ok := st.resolveCombatant(name)
	if !ok {
		t.Fatalf("no combatant %s", name)
	}
	return e
}

// Uses recharge: per turn when the bearer's turn begins, short-rest ones
// on a short rest, every one on a long rest; a rest is refused in a fight,
// with foes about, and right after another.
func TestAbilityRecharge(t *testing.T) {
	st := abilityState(t, RulesetD20)
	d := NewDice(5)
	st.engage(mustEntry(t, st, "Warrior"), mustEntry(t, st, "Grunt"))
	if _, _, err := st.UseAbility(d, "Rogue", "sneak_attack", "Grunt"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.UseAbility(d, "Rogue", "sneak_attack", "Grunt"); err == nil || !strings.Contains(err.Error(), "start of the next turn") {
		t.Fatalf("second sneak attack in a turn: %v", err)
	}
	st.beginTurn(mustEntry(t, st, "Rogue"))
	if got := usesOf(st, "c2", "sneak_attack"); got != 1 {
		t.Fatalf("sneak attack uses at the rogue's next turn: %d", got)
	}
	if _, _, err := st.UseAbility(d, "Mage", "magic_missile", "Boss"); err != nil {
		t.Fatal(err)
	}
	st.spendUse("c:c3", "sleep")
	st.Game.Turn = 10
	if _, _, err := st.Rest(d, RestShort); err == nil || !strings.Contains(err.Error(), "fight") {
		t.Fatalf("rest in a fight: %v", err)
	}
	if _, _, err := st.EndCombat(OutcomeForcedEnd, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Rest(d, RestShort); err == nil || !strings.Contains(err.Error(), "Boss") {
		t.Fatalf("rest with foes about: %v", err)
	}
	if _, _, _, err := st.MoveParty(NewDice(1), "", "town"); err != nil {
		t.Fatal(err)
	}
	st.Character("c1").HP = 1
	out, evs, err := st.Rest(d, RestShort)
	if err != nil {
		t.Fatal(err)
	}
	if usesOf(st, "c3", "magic_missile") != 2 || usesOf(st, "c3", "sleep") != 0 {
		t.Errorf("after a short rest: missile %d, sleep %d", usesOf(st, "c3", "magic_missile"), usesOf(st, "c3", "sleep"))
	}
	if c := st.Character("c1"); c.HP < 3 || c.HP > 8 || kinds(evs)[EventHeal] == 0 {
		t.Errorf("warrior HP %d after a short rest (1d6+1); events %v", c.HP, kinds(evs))
	}
	if len(out.Restored) == 0 {
		t.Error("the outcome names nothing restored")
	}
	st.Game.Turn = 11
	if _, _, err := st.Rest(d, RestLong); err == nil || !strings.Contains(err.Error(), "only just rested") {
		t.Fatalf("rest right after a rest: %v", err)
	}
	st.Game.Turn = 13
	if _, _, err := st.Rest(d, RestLong); err != nil {
		t.Fatal(err)
	}
	if usesOf(st, "c3", "sleep") != 1 || st.Character("c1").HP != st.Character("c1").MaxHP {
		t.Errorf("after a long rest: sleep %d, warrior %d HP", usesOf(st, "c3", "sleep"), st.Character("c1").HP)
	}
}

func usesOf(st *State, charID, ability string) int {
	for _, a := range st.CharacterAbilities(st.Character(charID)) {
		if a.ID == ability {
			return a.Uses
		}
	}
	return -1
}

func TestClassesHaveAtLeastThreeAbilities(t *testing.T) {
	for _, class := range []string{"warrior", "rogue", "mage", "cleric"} {
		ids := ClassAbilityIDs(class)
		if len(ids) < 3 {
			t.Errorf("%s has %d abilities", class, len(ids))
		}
		for _, id := range ids {
			if _, ok := ruleOf(id); !ok {
				t.Errorf("%s: unknown ability %s", class, id)
			}
		}
	}
	for _, r := range abilityRules {
		for _, dice := range []string{r.dice.D100, r.dice.D20} {
			if dice == "" || r.kind == kindSpellAttack && !strings.Contains(dice, "d") {
				continue
			}
			if _, _, _, err := ParseNotation(dice); err != nil {
				t.Errorf("%s: dice %q: %v", r.ID, dice, err)
			}
		}
	}
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// In narrative combat (no queue) a beat is everyone's turn: the per-turn
// abilities come back when it settles.
func TestAbilityRechargesEachNarrativeBeat(t *testing.T) {
	st := abilityState(t, RulesetD100)
	st.Config.CombatMode = CombatNarrative
	d := NewDice(2)
	if _, _, err := st.UseAbility(d, "Mage", "firebolt", "Boss"); err != nil {
		t.Fatal(err)
	}
	if usesOf(st, "c3", "firebolt") != 0 {
		t.Fatal("firebolt not spent")
	}
	st.SettleNarrativeTurn(d)
	if usesOf(st, "c3", "firebolt") != 1 {
		t.Error("firebolt did not come back after the beat")
	}
}
