package engine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// AbilityOutcome is what an ability did: the blows struck, the heals and
// the effects it put on whom ("Snikket: asleep").
type AbilityOutcome struct {
	Actor     string          `json:"actor"`
	Ability   string          `json:"ability"`
	AbilityID string          `json:"ability_id"`
	Target    string          `json:"target,omitempty"`
	UsesLeft  int             `json:"uses_left"`
	Success   bool            `json:"success"`
	Hits      []AttackOutcome `json:"hits,omitempty"`
	Heals     []HealOutcome   `json:"heals,omitempty"`
	Effects   []string        `json:"effects,omitempty"`
	Summary   string          `json:"summary"`
}

// UseAbility makes the combatant actor (entry id, id or name) use one of
// its abilities (id or name) on target in the running fight: an enemy's,
// an ally's or its own entry, or nothing, as the ability says (an ally
// ability with no target is used on the actor). The engine rolls every
// die and spends a use. A refusal (no such ability, no use left, a target
// that cannot be chosen) is an EINVALID or ENOTFOUND error whose message
// says what can be done instead, and spends nothing.
func (s *State) UseAbility(d *Dice, actor, ability, target string) (AbilityOutcome, []Event, error) {
	if s.Game.Combat == nil {
		return AbilityOutcome{}, nil, Errorf(EINVALID, "Abilities are used in a fight; out of one, rest to recover them.")
	}
	a, err := s.inFight(actor)
	if err != nil {
		return AbilityOutcome{}, nil, err
	}
	if !s.CanAct(a) {
		return AbilityOutcome{}, nil, Errorf(EINVALID, "%s cannot act (down or gone).", a.Name)
	}
	have := s.CombatantAbilities(a)
	key := abilityKey(ability)
	i := slices.IndexFunc(have, func(x Ability) bool { return x.ID == key || abilityKey(x.Name) == key })
	if i < 0 {
		return AbilityOutcome{}, nil, Errorf(ENOTFOUND, "%s has no ability %q; abilities: %s.", a.Name, ability, describeAbilities(have))
	}
	ab := have[i]
	rule, _ := ruleOf(ab.ID)
	if ab.Uses == 0 {
		return AbilityOutcome{}, nil, Errorf(EINVALID, "%s has no use of %s left (%s); ready: %s. Or attack, defend or use an item.",
			a.Name, ab.Name, rechargeWords(ab.Recharge), describeAbilities(ready(have)))
	}
	t, err := s.abilityTarget(a, rule, target)
	if err != nil {
		return AbilityOutcome{}, nil, err
	}
	if err := s.abilityCondition(a, t, rule); err != nil {
		return AbilityOutcome{}, nil, err
	}
	s.spendUse(bearer(a.Kind, a.Ref), ab.ID)
	out := AbilityOutcome{Actor: a.Name, Ability: ab.Name, AbilityID: ab.ID, UsesLeft: ab.Uses - 1, Success: true}
	if t.Entry != "" {
		out.Target = t.Name
	}
	evs := []Event{AbilityEvent(a.Name, ab.ID, out.Target, out.UsesLeft)}
	more := s.resolveAbility(d, a, t, rule, &out)
	evs = append(evs, more...)
	if rule.kind != kindSneak && rule.kind != kindStealth {
		// Any other action gives a hidden rogue away.
		evs = append(evs, s.unhide(a)...)
	}
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s uses %s: %s", s.Game.Combat.Round, a.Name, ab.Name, out.Summary))
	return out, evs, nil
}

// abilityTarget resolves and checks the target an ability is used on.
func (s *State) abilityTarget(a Combatant, r abilityRule, target string) (Combatant, error) {
	foes := func(e Combatant) bool { return s.Side(e) != s.Side(a) && s.CanAct(e) }
	allies := func(e Combatant) bool { return s.Side(e) == s.Side(a) && s.healableEntry(e) }
	switch r.Target {
	case TargetSelf:
		return a, nil
	case TargetNone:
		return Combatant{}, nil
	case TargetAlly:
		if strings.TrimSpace(target) == "" {
			if r.kind == kindRevive {
				return Combatant{}, Errorf(EINVALID, "%s needs a fallen ally to call back; fallen: %s.", r.Name, s.combatantNames(s.fallenAlly(a)))
			}
			return a, nil
		}
		t, ok := s.resolveCombatant(target)
		if !ok || s.Side(t) != s.Side(a) || !s.healableEntry(t) {
			return t, Errorf(EINVALID, "%s reaches only allies in this fight, not %q; allies: %s.", r.Name, target, s.combatantNames(allies))
		}
		return t, nil
	}
	if strings.TrimSpace(target) == "" {
		if r.kind == kindSleep {
			return Combatant{}, nil
		}
		return Combatant{}, Errorf(EINVALID, "%s needs a target; foes standing: %s.", r.Name, s.combatantNames(foes))
	}
	return s.foe(a, target)
}

// healableEntry tells whether a combatant can be healed: in the fight, not
// dead and not fled.
func (s *State) healableEntry(e Combatant) bool {
	st := s.statusesOf(e)
	return st != nil && !HasStatus(st, StatusDead) && !HasStatus(st, StatusFled)
}

func (s *State) fallenAlly(a Combatant) func(Combatant) bool {
	return func(e Combatant) bool {
		return s.Side(e) == s.Side(a) && s.healableEntry(e) && !s.CanAct(e)
	}
}

// abilityCondition checks what an ability needs beyond a target: a friend
// engaging the target of a sneak attack, a fallen ally to revive, undead
// to turn.
func (s *State) abilityCondition(a, t Combatant, r abilityRule) error {
	switch r.kind {
	case kindSneak:
		if s.hasEffect(a, EffectHidden) || s.engagedByFriend(a, t) {
			return nil
		}
		var ok []string
		for _, e := range s.Game.Combat.Order {
			if e.Kind != KindBookend && s.Side(e) != s.Side(a) && s.CanAct(e) && s.engagedByFriend(a, e) {
				ok = append(ok, e.Name)
			}
		}
		if len(ok) == 0 {
			return Errorf(EINVALID, "Sneak attack needs a friend fighting the target, or you hidden; no friend is fighting anyone yet. Hide first, or attack.")
		}
		return Errorf(EINVALID, "Sneak attack needs a friend fighting the target, and none is fighting %s; sneak attack %s instead, or attack.", t.Name, strings.Join(ok, " or "))
	case kindRevive:
		if s.CanAct(t) {
			return Errorf(EINVALID, "%s is still standing: %s calls back only a fallen ally; fallen: %s. Healing word heals the living.", t.Name, r.Name, s.combatantNames(s.fallenAlly(a)))
		}
	case kindHealAlly, kindHealSelf:
		if s.hpOf(t) >= s.maxHPOf(t) {
			return Errorf(EINVALID, "%s is unhurt (%d/%d HP); %s would be wasted. Hurt: %s.", t.Name, s.hpOf(t), s.maxHPOf(t), r.Name,
				s.combatantNames(func(e Combatant) bool {
					return s.Side(e) == s.Side(a) && s.healableEntry(e) && s.hpOf(e) < s.maxHPOf(e)
				}))
		}
	case kindTurnUndead:
		if len(s.undeadFoes(a)) == 0 {
			return Errorf(EINVALID, "There is no undead foe here to turn (foes: %s); bless the party or heal instead.", s.combatantNames(func(e Combatant) bool { return s.Side(e) != s.Side(a) && s.CanAct(e) }))
		}
		if len(s.turnable(a)) == 0 {
			var names []string
			for _, e := range s.undeadFoes(a) {
				names = append(names, fmt.Sprintf("%s (level %d)", e.Name, s.fighter(e).Level))
			}
			return Errorf(EINVALID, "%s can turn only undead of level %d or lower, and %s stand%s above it; bless the party or attack instead.",
				a.Name, s.fighter(a).Level, strings.Join(names, ", "), map[bool]string{true: "s", false: ""}[len(names) == 1])
		}
	}
	return nil
}

func (s *State) maxHPOf(t Combatant) int {
	switch t.Kind {
	case KindNPC:
		return s.World.NPCs[t.Ref].MaxHP
	case KindPC:
		return s.Character(t.Ref).MaxHP
	}
	return 0
}

// engagedByFriend tells whether an ally of a (not a) is fighting t: it
// attacked t last, or t last attacked it.
func (s *State) engagedByFriend(a, t Combatant) bool {
	cb := s.Game.Combat
	for _, e := range cb.Order {
		if e.Entry == a.Entry || e.Kind == KindBookend || s.Side(e) != s.Side(a) || !s.CanAct(e) {
			continue
		}
		if cb.Engaged[e.Entry] == t.Entry || cb.Engaged[t.Entry] == e.Entry {
			return true
		}
	}
	return false
}

func (s *State) engage(a, t Combatant) {
	cb := s.Game.Combat
	if cb.Engaged == nil {
		cb.Engaged = map[EntryID]EntryID{}
	}
	cb.Engaged[a.Entry] = t.Entry
}

func (s *State) undeadFoes(a Combatant) []Combatant {
	var out []Combatant
	for _, e := range s.Game.Combat.Order {
		if e.Kind == KindNPC && s.Side(e) != s.Side(a) && s.CanAct(e) && s.undead(e.Ref) {
			out = append(out, e)
		}
	}
	return out
}

// turnable are the undead foes a can turn: those of its level or lower.
// A greater dead thing (a barrow king) stands its ground, so one cleric
// does not hold a whole tomb still.
func (s *State) turnable(a Combatant) []Combatant {
	lvl := s.fighter(a).Level
	return slices.DeleteFunc(s.undeadFoes(a), func(e Combatant) bool { return s.fighter(e).Level > lvl })
}

// resolveAbility rolls and applies an ability whose target and use are
// settled.
func (s *State) resolveAbility(d *Dice, a, t Combatant, r abilityRule, out *AbilityOutcome) []Event {
	var evs []Event
	dice := s.Ruleset().Dice(r.dice)
	switch r.kind {
	case kindHealSelf, kindHealAlly, kindRevive:
		roll, _ := d.RollNotation(a.Name, r.Name+" on "+t.Name, dice)
		evs = append(evs, diceEvents(d)...)
		before := s.hpOf(t)
		hp, maxHP, hev := s.heal(t, max(0, roll.Total))
		evs = append(evs, hev...)
		out.Heals = append(out.Heals, HealOutcome{Target: t.Name, Amount: hp - before, HP: hp, MaxHP: maxHP})
		out.Summary = fmt.Sprintf("%s recovers %d HP (%d/%d)", t.Name, hp-before, hp, maxHP)
	case kindWeaponBonus, kindSneak:
		evs = append(evs, s.weaponBlow(d, a, t, r, dice, out)...)
	case kindSpellAttack:
		evs = append(evs, s.spellBlow(d, a, t, r, dice, out)...)
	case kindMissile:
		// It never misses: a blow without an attack roll.
		roll, _ := d.RollNotation(a.Name, r.Name+" on "+t.Name, dice)
		dmg := max(1, roll.Total)
		evs = append(evs, s.abilityBlow(d, a, t, AttackResult{Hit: true, Damage: dmg}, out)...)
		out.Summary = fmt.Sprintf("%d damage to %s", dmg, t.Name)
	case kindSelfEffect:
		evs = append(evs, s.effectOn(a, r, out)...)
		out.Summary = fmt.Sprintf("%s is %s", a.Name, r.effect)
	case kindGuard:
		for _, e := range s.alliesStanding(a, 0) {
			evs = append(evs, s.effectOn(e, r, out)...)
		}
		out.Summary = fmt.Sprintf("%s: %s", strings.Join(out.Effects, ", "), r.effect)
	case kindBlessParty:
		for _, e := range s.alliesStanding(a, 3) {
			evs = append(evs, s.effectOn(e, r, out)...)
		}
		out.Summary = fmt.Sprintf("%s: %s", strings.Join(out.Effects, ", "), r.effect)
	case kindStealth:
		best := s.sharpestFoe(a)
		mine := s.Ruleset().Contest(d, s.fighter(a), StatAGI, "hide")
		won := true
		if best != nil {
			theirs := s.Ruleset().Contest(d, *best, StatAGI, "spot "+a.Name)
			won = mine.Total > theirs.Total
		}
		evs = append(evs, diceEvents(d)...)
		out.Success = won
		if won {
			evs = append(evs, s.effectOn(a, r, out)...)
			out.Summary = a.Name + " slips out of sight"
		} else {
			out.Summary = a.Name + " is spotted"
		}
	case kindHex:
		mine := s.Ruleset().Contest(d, s.fighter(a), StatAGI, r.Name+" "+t.Name)
		theirs := s.Ruleset().Contest(d, s.fighter(t), StatAGI, "resist "+r.Name)
		evs = append(evs, diceEvents(d)...)
		out.Success = mine.Total > theirs.Total
		s.engage(a, t)
		if out.Success {
			evs = append(evs, s.effectOn(t, r, out)...)
			out.Summary = fmt.Sprintf("%s is %s", t.Name, r.effect)
		} else {
			out.Summary = t.Name + " keeps hold"
		}
	case kindSleep:
		evs = append(evs, s.sleep(d, a, t, r, dice, out)...)
	case kindTurnUndead:
		for _, e := range s.turnable(a) {
			mine := s.Ruleset().Contest(d, s.fighter(a), StatWIS, "turn "+e.Name)
			theirs := s.Ruleset().Contest(d, s.fighter(e), StatWIS, "resist turning")
			evs = append(evs, diceEvents(d)...)
			if mine.Total > theirs.Total {
				evs = append(evs, s.effectOn(e, r, out)...)
			}
		}
		out.Success = len(out.Effects) > 0
		out.Summary = fmt.Sprintf("turned: %s", fmtNames(out.Effects))
	}
	return evs
}

// effectOn puts the ability's effect on e and notes its name.
func (s *State) effectOn(e Combatant, r abilityRule, out *AbilityOutcome) []Event {
	evs, err := s.ApplyEffect(string(e.Entry), r.effect, r.rounds, out.Actor)
	if err != nil {
		return nil
	}
	out.Effects = append(out.Effects, e.Name)
	return evs
}

// alliesStanding lists a and its allies who can act, a first; at most n
// (0: all).
func (s *State) alliesStanding(a Combatant, n int) []Combatant {
	out := []Combatant{a}
	for _, e := range s.Game.Combat.Order {
		if e.Entry != a.Entry && e.Kind != KindBookend && s.Side(e) == s.Side(a) && s.CanAct(e) {
			out = append(out, e)
		}
	}
	if n > 0 && len(out) > n {
		out = out[:n]
	}
	return out
}

func (s *State) sharpestFoe(a Combatant) *Fighter {
	var best *Fighter
	for _, e := range s.Game.Combat.Order {
		if e.Kind == KindBookend || s.Side(e) == s.Side(a) || !s.CanAct(e) {
			continue
		}
		f := s.fighter(e)
		if best == nil || Mod(f.Stats.AGI) > Mod(best.Stats.AGI) {
			best = &f
		}
	}
	return best
}

// weaponBlow is a weapon attack with bonus damage dice on a hit (power
// attack, sneak attack).
func (s *State) weaponBlow(d *Dice, a, t Combatant, r abilityRule, bonus string, out *AbilityOutcome) []Event {
	fa, ft := s.fighter(a), s.fighter(t)
	res := s.Ruleset().Attack(d, fa, ft, s.attackAdvantage(a, t))
	if res.Hit {
		n, sides, mod, err := ParseNotation(bonus)
		if err == nil {
			if res.Crit {
				n *= 2
			}
			b := d.Roll(a.Name, fmt.Sprintf("%s on %s", strings.ToLower(r.Name), t.Name), n, sides, mod)
			res.Damage += max(0, b.Total)
		}
	}
	return s.abilityBlow(d, a, t, res, out)
}

// spellBlow is an attack roll with the INT modifier in place of the
// weapon's ability, its own damage, and no armour absorption.
func (s *State) spellBlow(d *Dice, a, t Combatant, r abilityRule, dice string, out *AbilityOutcome) []Event {
	fa, ft := s.fighter(a), s.fighter(t)
	fa.AttackStat = StatINT
	fa.Weapon = Weapon{ID: r.ID, Name: r.Name, Dice: dice, Ranged: true}
	if n, err := strconv.Atoi(dice); err == nil {
		fa.Weapon.Damage = n
	}
	ft.Armour.Absorption = 0
	res := s.Ruleset().Attack(d, fa, ft, s.attackAdvantage(a, t))
	return s.abilityBlow(d, a, t, res, out)
}

// abilityBlow lands an ability's blow and records it in out.
func (s *State) abilityBlow(d *Dice, a, t Combatant, res AttackResult, out *AbilityOutcome) []Event {
	o, evs := s.landBlow(d, a, t, res)
	out.Hits = append(out.Hits, o)
	out.Success = res.Hit
	out.Summary = fmt.Sprintf("%s on %s", describeAttack(res), t.Name)
	return evs
}

// sleep rolls a pool of HP; the named foe first, then the others standing
// from the fewest HP, fall asleep while the pool covers their HP.
func (s *State) sleep(d *Dice, a, t Combatant, r abilityRule, dice string, out *AbilityOutcome) []Event {
	roll, _ := d.RollNotation(a.Name, r.Name, dice)
	evs := diceEvents(d)
	var foes []Combatant
	for _, e := range s.Game.Combat.Order {
		if e.Kind != KindBookend && s.Side(e) != s.Side(a) && s.CanAct(e) && !s.hasEffect(e, EffectAsleep) {
			foes = append(foes, e)
		}
	}
	sort.SliceStable(foes, func(i, j int) bool {
		if (foes[i].Entry == t.Entry) != (foes[j].Entry == t.Entry) {
			return foes[i].Entry == t.Entry
		}
		return s.hpOf(foes[i]) < s.hpOf(foes[j])
	})
	pool := roll.Total
	for _, e := range foes {
		hp := s.hpOf(e)
		if hp > pool {
			if e.Entry == t.Entry {
				continue // the named foe is too strong: the others may still fall
			}
			break
		}
		pool -= hp
		evs = append(evs, s.effectOn(e, r, out)...)
	}
	out.Success = len(out.Effects) > 0
	out.Summary = fmt.Sprintf("asleep: %s", fmtNames(out.Effects))
	return evs
}

func (s *State) hasEffect(e Combatant, name string) bool {
	return slices.ContainsFunc(s.Game.Combat.Effects, func(x Effect) bool { return x.Entry == e.Entry && x.Name == name })
}

// unhide ends a combatant's hiding: it struck, or acted in the open.
func (s *State) unhide(e Combatant) []Event { return s.endEffect(e, EffectHidden) }

// endEffect removes an effect and its status from e before its time.
func (s *State) endEffect(e Combatant, name string) []Event {
	cb := s.Game.Combat
	if !s.hasEffect(e, name) {
		return nil
	}
	cb.Effects = slices.DeleteFunc(cb.Effects, func(x Effect) bool { return x.Entry == e.Entry && x.Name == name })
	if st := s.statusesOf(e); st != nil {
		s.setStatuses(e, RemoveStatus(st, name))
	}
	return []Event{StatusRemovedEvent(e.Name, name)}
}

// rechargeTurn restores the abilities of e that come back every turn.
func (s *State) rechargeTurn(e Combatant) {
	if len(s.Game.Spent) == 0 {
		return
	}
	s.restoreUses(bearer(e.Kind, e.Ref), RechargeTurn)
}
