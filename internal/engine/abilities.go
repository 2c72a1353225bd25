package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Abilities (PROTOCOL.md "Abilities"): what a class can do besides hitting
// with its weapon, each resolved here with dice and spent from uses that
// recharge on a rest or at the start of the bearer's turn. The uses spent
// live in Game.Spent, so they are saved with the game state.

// Ability ids, as the rules, the sheet and the offline narrator name them.
const (
	AbilitySecondWind   = "second_wind"
	AbilityPowerAttack  = "power_attack"
	AbilityShieldWall   = "shield_wall"
	AbilitySneakAttack  = "sneak_attack"
	AbilityHide         = "hide"
	AbilityDisarm       = "disarm"
	AbilityFirebolt     = "firebolt"
	AbilityMagicMissile = "magic_missile"
	AbilitySleep        = "sleep"
	AbilityShield       = "shield"
	AbilityHealingWord  = "healing_word"
	AbilityBless        = "bless"
	AbilityTurnUndead   = "turn_undead"
	AbilityRevive       = "revive"
)

// Ability targets.
const (
	TargetEnemy = "enemy"
	TargetAlly  = "ally"
	TargetSelf  = "self"
	TargetNone  = "none"
)

// Recharges: when a spent use comes back.
const (
	RechargeShortRest = "short_rest"
	RechargeLongRest  = "long_rest"
	RechargeTurn      = "turn"
)

// Ability is one ability as a sheet shows it (PROTOCOL.md "Abilities").
type Ability struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Target      string `json:"target"`
	Uses        int    `json:"uses"`
	MaxUses     int    `json:"max_uses"`
	Recharge    string `json:"recharge"`
}

// abilityRule is an ability's definition: its sheet and how it resolves.
// dice are its bonus damage, damage, healing or pool, as the kind says.
type abilityRule struct {
	Ability
	kind   string
	dice   ByRuleset
	effect string
	rounds int
}

// Kinds of resolution.
const (
	kindHealSelf    = "heal_self"    // heals the user
	kindWeaponBonus = "weapon_bonus" // a weapon attack with bonus damage on a hit
	kindSneak       = "sneak"        // weapon_bonus, only with a friend engaging the target (or hidden)
	kindSpellAttack = "spell_attack" // an attack roll with the INT modifier, fire ignoring armour absorption
	kindMissile     = "missile"      // damage that never misses, ignoring armour
	kindGuard       = "guard"        // an effect on the user and its allies standing
	kindSelfEffect  = "self_effect"  // an effect on the user
	kindStealth     = "stealth"      // a contest against the sharpest foe; the effect on a win
	kindHex         = "hex"          // a contest against the target; the effect on it on a win
	kindSleep       = "sleep"        // a pool of HP: foes, weakest first, fall asleep
	kindHealAlly    = "heal_ally"    // heals an ally not dead
	kindRevive      = "revive"       // heals a fallen ally
	kindBlessParty  = "bless_party"  // an effect on the user and up to two allies
	kindTurnUndead  = "turn_undead"  // undead foes lose a contest or are stunned
)

var abilityRules = []abilityRule{
	{Ability: Ability{ID: AbilitySecondWind, Name: "Second wind", Description: "Catch your breath mid-fight and heal yourself.", Target: TargetSelf, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindHealSelf, dice: ByRuleset{"2d8+5", "1d10+1"}},
	{Ability: Ability{ID: AbilityPowerAttack, Name: "Power attack", Description: "A heavy weapon blow: extra damage on a hit.", Target: TargetEnemy, MaxUses: 2, Recharge: RechargeShortRest},
		kind: kindWeaponBonus, dice: ByRuleset{"1d10", "1d6"}},
	{Ability: Ability{ID: AbilityShieldWall, Name: "Shield wall", Description: "You and your allies close ranks: harder to hit until your next turns.", Target: TargetNone, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindGuard, effect: EffectShielded, rounds: 1},
	{Ability: Ability{ID: AbilitySneakAttack, Name: "Sneak attack", Description: "Strike a foe a friend is fighting (or from hiding) for extra damage; once a turn.", Target: TargetEnemy, MaxUses: 1, Recharge: RechargeTurn},
		kind: kindSneak, dice: ByRuleset{"2d6", "1d6"}},
	{Ability: Ability{ID: AbilityHide, Name: "Hide", Description: "Slip out of sight: foes attack you with disadvantage, your next strike has advantage and counts as a sneak attack.", Target: TargetSelf, MaxUses: 2, Recharge: RechargeShortRest},
		kind: kindStealth, effect: EffectHidden, rounds: 2},
	{Ability: Ability{ID: AbilityDisarm, Name: "Disarm", Description: "Knock a foe's weapon aside: it attacks with disadvantage for two rounds.", Target: TargetEnemy, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindHex, effect: EffectWeakened, rounds: 2},
	{Ability: Ability{ID: AbilityFirebolt, Name: "Firebolt", Description: "Hurl a mote of fire (INT attack); armour does not soak it.", Target: TargetEnemy, MaxUses: 1, Recharge: RechargeTurn},
		kind: kindSpellAttack, dice: ByRuleset{"9", "1d10"}},
	{Ability: Ability{ID: AbilityMagicMissile, Name: "Magic missile", Description: "Darts of force that never miss.", Target: TargetEnemy, MaxUses: 2, Recharge: RechargeShortRest},
		kind: kindMissile, dice: ByRuleset{"3d4+4", "2d4+1"}},
	{Ability: Ability{ID: AbilitySleep, Name: "Sleep", Description: "Foes fall asleep, the weakest first, the one you name before the others, as far as the dice reach; a blow wakes them.", Target: TargetEnemy, MaxUses: 1, Recharge: RechargeLongRest},
		kind: kindSleep, dice: ByRuleset{"5d8", "3d8"}, effect: EffectAsleep, rounds: 2},
	{Ability: Ability{ID: AbilityShield, Name: "Shield", Description: "A shimmering ward: you are harder to hit for two rounds.", Target: TargetSelf, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindSelfEffect, effect: EffectShielded, rounds: 2},
	{Ability: Ability{ID: AbilityHealingWord, Name: "Healing word", Description: "Heal an ally at range; it brings a fallen friend round.", Target: TargetAlly, MaxUses: 3, Recharge: RechargeLongRest},
		kind: kindHealAlly, dice: ByRuleset{"2d6+2", "1d8+3"}},
	{Ability: Ability{ID: AbilityBless, Name: "Bless", Description: "You and two allies attack with advantage for three rounds.", Target: TargetNone, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindBlessParty, effect: EffectBlessed, rounds: 3},
	{Ability: Ability{ID: AbilityTurnUndead, Name: "Turn undead", Description: "Undead foes of your level or lower that fail to resist cower, stunned, for two rounds.", Target: TargetNone, MaxUses: 1, Recharge: RechargeShortRest},
		kind: kindTurnUndead, effect: EffectStunned, rounds: 2},
	{Ability: Ability{ID: AbilityRevive, Name: "Revive", Description: "Call a fallen ally back to their feet with a strong healing.", Target: TargetAlly, MaxUses: 1, Recharge: RechargeLongRest},
		kind: kindRevive, dice: ByRuleset{"2d8+2", "2d6+2"}},
}

// classAbilities are the abilities of each class, in sheet order.
var classAbilities = map[string][]string{
	"warrior": {AbilitySecondWind, AbilityPowerAttack, AbilityShieldWall},
	"rogue":   {AbilitySneakAttack, AbilityHide, AbilityDisarm},
	"mage":    {AbilityFirebolt, AbilityMagicMissile, AbilitySleep, AbilityShield},
	"cleric":  {AbilityHealingWord, AbilityBless, AbilityTurnUndead, AbilityRevive},
}

// AbilityIDs lists every ability the rules know, in definition order.
func AbilityIDs() []string {
	out := make([]string, len(abilityRules))
	for i, r := range abilityRules {
		out[i] = r.ID
	}
	return out
}

// ClassAbilityIDs lists the abilities of a class (nil for an unknown one).
func ClassAbilityIDs(class string) []string { return slices.Clone(classAbilities[class]) }

func ruleOf(id string) (abilityRule, bool) {
	i := slices.IndexFunc(abilityRules, func(r abilityRule) bool { return r.ID == id })
	if i < 0 {
		return abilityRule{}, false
	}
	return abilityRules[i], true
}

// abilityKey normalises what a player or the model calls an ability:
// "Magic Missile", "magic-missile" and "magic_missile" are one.
func abilityKey(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// bearer is the key of a combatant's uses in Game.Spent: "c:<character
// id>" or "n:<npc id>".
func bearer(kind, ref string) string {
	if kind == KindNPC {
		return "n:" + ref
	}
	return "c:" + ref
}

// abilityIDsOf lists the abilities of a PC (its class) or an NPC (its
// profile, copied into Game.NPCAbilities when the world was made).
func (s *State) abilityIDsOf(kind, ref string) []string {
	if kind == KindNPC {
		return s.Game.NPCAbilities[ref]
	}
	if c := s.Character(ref); c != nil {
		return classAbilities[c.Class]
	}
	return nil
}

func (s *State) abilitiesOf(kind, ref string) []Ability {
	ids := s.abilityIDsOf(kind, ref)
	out := make([]Ability, 0, len(ids))
	spent := s.Game.Spent[bearer(kind, ref)]
	for _, id := range ids {
		r, ok := ruleOf(id)
		if !ok {
			continue
		}
		a := r.Ability
		a.Uses = max(0, a.MaxUses-spent[id])
		out = append(out, a)
	}
	return out
}

// CharacterAbilities is the character's abilities with the uses left; an
// empty list for a class without any.
func (s *State) CharacterAbilities(c *Character) []Ability { return s.abilitiesOf(KindPC, c.ID) }

// NPCAbilities is the NPC's abilities with the uses left (an empty list
// when its profile lists none).
func (s *State) NPCAbilities(n *NPC) []Ability { return s.abilitiesOf(KindNPC, n.ID) }

// CombatantAbilities is the abilities of a combatant of the running fight.
func (s *State) CombatantAbilities(e Combatant) []Ability { return s.abilitiesOf(e.Kind, e.Ref) }

// spendUse takes one use of ability id from a bearer; restoreUses gives
// back every use of the recharges named.
func (s *State) spendUse(key, id string) {
	if s.Game.Spent == nil {
		s.Game.Spent = map[string]map[string]int{}
	}
	if s.Game.Spent[key] == nil {
		s.Game.Spent[key] = map[string]int{}
	}
	s.Game.Spent[key][id]++
}

func (s *State) restoreUses(key string, recharges ...string) {
	spent := s.Game.Spent[key]
	for id := range spent {
		if r, ok := ruleOf(id); ok && slices.Contains(recharges, r.Recharge) {
			delete(spent, id)
		}
	}
	if len(spent) == 0 {
		delete(s.Game.Spent, key)
	}
}

// describeAbilities lists abilities for a refusal: "Firebolt (1/1),
// Sleep (0/1, long rest)".
func describeAbilities(as []Ability) string {
	if len(as) == 0 {
		return "none"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		parts[i] = fmt.Sprintf("%s (%s, %d/%d)", a.Name, a.ID, a.Uses, a.MaxUses)
	}
	return strings.Join(parts, ", ")
}

func rechargeWords(r string) string {
	switch r {
	case RechargeTurn:
		return "it comes back at the start of the next turn"
	case RechargeShortRest:
		return "a short rest out of a fight restores it"
	}
	return "a long rest restores it"
}

// ready lists the abilities with uses left.
func ready(as []Ability) []Ability {
	return slices.DeleteFunc(slices.Clone(as), func(a Ability) bool { return a.Uses == 0 })
}

// undead tells whether the NPC id is one of the restless dead, whom turn
// undead affects (its adventure profile says so).
func (s *State) undead(id string) bool { return slices.Contains(s.Game.Undead, id) }
