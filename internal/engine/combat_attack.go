package engine

import (
	"fmt"
	"strings"
)

// What combatants do on their turn: attack, defend, flee.

// inFight resolves a combatant of the running fight, or explains who is in
// it.
func (s *State) inFight(ref string) (Combatant, error) {
	e, ok := s.resolveCombatant(ref)
	if !ok {
		return e, Errorf(ENOTFOUND, "%q is not in this fight; combatants: %s.", ref, s.combatantNames(func(Combatant) bool { return true }))
	}
	return e, nil
}

// standing resolves a combatant of the running fight who can still act.
func (s *State) standing(ref string) (Combatant, error) {
	e, err := s.inFight(ref)
	if err == nil && !s.CanAct(e) {
		err = Errorf(EINVALID, "%s is already down; standing: %s.", e.Name, s.combatantNames(s.CanAct))
	}
	return e, err
}

// resolveCombatant finds a combatant of the running fight by entry id,
// NPC/character id or name.
func (s *State) resolveCombatant(ref string) (Combatant, bool) {
	cb := s.Game.Combat
	ref = strings.TrimSpace(ref)
	for _, e := range cb.Order {
		if e.Kind == KindBookend {
			continue
		}
		if e.Entry == EntryID(ref) || e.Ref == ref || strings.EqualFold(e.Name, ref) {
			return e, true
		}
	}
	return Combatant{}, false
}

func (s *State) combatantNames(pred func(Combatant) bool) string {
	var names []string
	for _, e := range s.Game.Combat.Order {
		if e.Kind != KindBookend && pred(e) {
			names = append(names, e.Name)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// Side is the side a combatant fights on.
type Side string

// The sides of a fight: the PCs and their friends, and the hostile NPCs.
const (
	SideParty Side = "party"
	SideFoes  Side = "foes"
)

// Side tells which side a combatant of the running fight is on: PCs and
// NPCs that are not hostile fight with the party.
func (s *State) Side(e Combatant) Side {
	if e.Kind == KindPC {
		return SideParty
	}
	if n := s.World.NPCs[e.Ref]; n != nil && !n.Hostile {
		return SideParty
	}
	return SideFoes
}

// foe resolves the target of a's blow or hostile ability: a combatant of
// the other side still standing. Its refusals name the foes standing.
func (s *State) foe(a Combatant, target string) (Combatant, error) {
	foes := func(e Combatant) bool { return s.Side(e) != s.Side(a) && s.CanAct(e) }
	t, ok := s.resolveCombatant(target)
	switch {
	case !ok:
		return t, Errorf(ENOTFOUND, "%q is not in this fight; foes standing: %s.", target, s.combatantNames(foes))
	case t.Entry == a.Entry:
		return t, Errorf(EINVALID, "%s cannot strike itself; foes standing: %s.", a.Name, s.combatantNames(foes))
	case s.Side(t) == s.Side(a):
		return t, Errorf(EINVALID, "%s is an ally of %s; foes standing: %s.", t.Name, a.Name, s.combatantNames(foes))
	case !s.CanAct(t):
		return t, Errorf(EINVALID, "%s is out of reach (already down or gone); foes standing: %s.", t.Name, s.combatantNames(foes))
	}
	return t, nil
}

// landBlow applies an attack's result: the attacker's off balance ends,
// or begins after a fumble; the damage; a hidden attacker is seen; and
// a now fights t. Attack and every ability that strikes end here.
func (s *State) landBlow(d *Dice, a, t Combatant, res AttackResult) (AttackOutcome, []Event) {
	evs := diceEvents(d)
	if st := s.fighter(a).Statuses; HasStatus(st, StatusOffBalance) {
		s.setStatuses(a, RemoveStatus(st, StatusOffBalance))
		evs = append(evs, StatusRemovedEvent(a.Name, StatusOffBalance))
	}
	if res.Fumble {
		s.setStatuses(a, AddStatus(s.fighter(a).Statuses, StatusOffBalance))
		evs = append(evs, StatusAddedEvent(a.Name, StatusOffBalance))
	}
	out := AttackOutcome{Attacker: a.Name, Target: t.Name, Result: res}
	var dev []Event
	out.HP, out.MaxHP, out.Down, dev = s.damage(t, res.Damage, res.Hit)
	evs = append(evs, dev...)
	evs = append(evs, s.unhide(a)...)
	s.engage(a, t)
	return out, evs
}

// AttackOutcome is what an attack did.
type AttackOutcome struct {
	Attacker string       `json:"attacker"`
	Target   string       `json:"target"`
	Result   AttackResult `json:"result"`
	HP       int          `json:"hp"`
	MaxHP    int          `json:"max_hp"`
	Down     string       `json:"down,omitempty"` // "dead" or "unconscious"
}

// Attack resolves an attack by the combatant actor (entry id, id or name)
// on target in the running fight. The engine rolls every die.
func (s *State) Attack(d *Dice, actor, target string) (AttackOutcome, []Event, error) {
	if s.Game.Combat == nil {
		return AttackOutcome{}, nil, Errorf(EINVALID, "There is no fight under way; start one with start_combat.")
	}
	a, err := s.inFight(actor)
	if err != nil {
		return AttackOutcome{}, nil, err
	}
	if !s.CanAct(a) {
		return AttackOutcome{}, nil, Errorf(EINVALID, "%s cannot act (down or gone).", a.Name)
	}
	t, err := s.foe(a, target)
	if err != nil {
		return AttackOutcome{}, nil, err
	}
	res := s.Ruleset().Attack(d, s.fighter(a), s.fighter(t), s.attackAdvantage(a, t))
	out, evs := s.landBlow(d, a, t, res)
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s attacks %s: %s", s.Game.Combat.Round, a.Name, t.Name, describeAttack(res)))
	return out, evs, nil
}

func describeAttack(r AttackResult) string {
	switch {
	case r.Fumble:
		return "fumble"
	case r.Crit:
		return fmt.Sprintf("critical hit for %d", r.Damage)
	case r.Hit:
		return fmt.Sprintf("hit for %d", r.Damage)
	}
	return "miss"
}

func (s *State) setStatuses(e Combatant, st []string) {
	switch e.Kind {
	case KindNPC:
		if n := s.World.NPCs[e.Ref]; n != nil {
			n.Statuses = st
		}
	case KindPC:
		if c := s.Character(e.Ref); c != nil {
			c.Statuses = st
		}
	}
}

// damage applies amount to a combatant; hit says whether a damage event is
// due (a hit for 0 after armour still reports). NPCs die at 0 HP, PCs fall
// unconscious.
func (s *State) damage(t Combatant, amount int, hit bool) (hp, maxHP int, down string, evs []Event) {
	var statuses *[]string
	var hpp *int
	switch t.Kind {
	case KindNPC:
		n := s.World.NPCs[t.Ref]
		hpp, maxHP, statuses = &n.HP, n.MaxHP, &n.Statuses
	case KindPC:
		c := s.Character(t.Ref)
		hpp, maxHP, statuses = &c.HP, c.MaxHP, &c.Statuses
	}
	if hit {
		*hpp = max(0, *hpp-amount)
		evs = append(evs, DamageEvent(t.Name, amount, *hpp, maxHP))
		if amount > 0 && s.Game.Combat != nil {
			evs = append(evs, s.endEffect(t, EffectAsleep)...) // a blow wakes a sleeper
		}
	}
	if *hpp == 0 {
		down = StatusUnconscious
		if t.Kind == KindNPC {
			down = StatusDead
		}
		if !HasStatus(*statuses, down) {
			*statuses = AddStatus(RemoveStatus(*statuses, StatusDefending), down)
			evs = append(evs, StatusAddedEvent(t.Name, down))
		}
	}
	return *hpp, maxHP, down, evs
}

// Defend makes actor defend until the start of its next turn.
func (s *State) Defend(actor string) ([]Event, error) {
	if s.Game.Combat == nil {
		return nil, Errorf(EINVALID, "There is no fight under way.")
	}
	a, ok := s.resolveCombatant(actor)
	if !ok || !s.CanAct(a) {
		return nil, Errorf(EINVALID, "%q cannot defend now.", actor)
	}
	s.setStatuses(a, AddStatus(s.fighter(a).Statuses, StatusDefending))
	return []Event{StatusAddedEvent(a.Name, StatusDefending)}, nil
}

// Flee makes actor try to escape: a contested agility roll against the best
// opposing combatant still standing. On success the actor is "fled".
func (s *State) Flee(d *Dice, actor string) (bool, []Event, error) {
	if s.Game.Combat == nil {
		return false, nil, Errorf(EINVALID, "There is no fight under way.")
	}
	a, ok := s.resolveCombatant(actor)
	if !ok || !s.CanAct(a) {
		return false, nil, Errorf(EINVALID, "%q cannot flee now.", actor)
	}
	rs := s.Ruleset()
	fa := s.fighter(a)
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
	success := true
	if best != nil {
		mine := rs.Contest(d, fa, StatAGI, "flee")
		theirs := rs.Contest(d, *best, StatAGI, "chase "+fa.Name)
		success = mine.Total > theirs.Total
	}
	evs := diceEvents(d)
	if success {
		s.setStatuses(a, AddStatus(RemoveStatus(fa.Statuses, StatusDefending), StatusFled))
		evs = append(evs, StatusAddedEvent(a.Name, StatusFled))
	}
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s tries to flee: %v", s.Game.Combat.Round, a.Name, success))
	return success, evs, nil
}
