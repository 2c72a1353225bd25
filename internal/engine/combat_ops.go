package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Caps on dice the DM may ask the engine to roll (the model names the dice,
// never the result).
var (
	healCap   = diceCap{n: 4, sides: 12, mod: 10}
	damageCap = diceCap{n: 6, sides: 12, mod: 20}
)

type diceCap struct{ n, sides, mod int }

func (c diceCap) check(notation, what string) error {
	n, sides, mod, err := ParseNotation(notation)
	if err != nil {
		return err
	}
	if n > c.n || sides > c.sides || mod > c.mod || mod < -c.mod {
		return Errorf(EINVALID, "%s dice %q are too strong: at most %dd%d+%d.", what, notation, c.n, c.sides, c.mod)
	}
	return nil
}

// heal restores amount HP to a combatant (at most to its max); an
// unconscious PC healed above 0 comes round.
func (s *State) heal(t Combatant, amount int) (hp, maxHP int, evs []Event) {
	var hpp *int
	switch t.Kind {
	case KindNPC:
		n := s.World.NPCs[t.Ref]
		hpp, maxHP = &n.HP, n.MaxHP
	case KindPC:
		c := s.Character(t.Ref)
		hpp, maxHP = &c.HP, c.MaxHP
	}
	before := *hpp
	*hpp = min(maxHP, *hpp+amount)
	evs = append(evs, HealEvent(t.Name, *hpp-before, *hpp, maxHP))
	if st := s.statusesOf(t); *hpp > 0 && HasStatus(st, StatusUnconscious) {
		s.setStatuses(t, RemoveStatus(st, StatusUnconscious))
		evs = append(evs, StatusRemovedEvent(t.Name, StatusUnconscious))
	}
	return *hpp, maxHP, evs
}

// healable resolves a heal target: in the fight, not dead, not fled.
func (s *State) healable(target string) (Combatant, error) {
	t, err := s.inFight(target)
	if err != nil {
		return t, err
	}
	st := s.statusesOf(t)
	if HasStatus(st, StatusDead) || HasStatus(st, StatusFled) {
		return t, Errorf(EINVALID, "%s cannot be healed (%s).", t.Name, strings.Join(st, ", "))
	}
	return t, nil
}

// HealOutcome is what a heal did.
type HealOutcome struct {
	Target string `json:"target"`
	Amount int    `json:"amount"`
	HP     int    `json:"hp"`
	MaxHP  int    `json:"max_hp"`
}

// Heal rolls dice (at most 4d12+10) to heal a combatant who is not dead:
// a prayer, a potion poured by another, first aid. An unconscious PC
// healed above 0 HP comes round.
func (s *State) Heal(d *Dice, healer, target, dice string) (HealOutcome, []Event, error) {
	if s.Game.Combat == nil {
		return HealOutcome{}, nil, Errorf(EINVALID, "There is no fight under way.")
	}
	if err := healCap.check(dice, "Healing"); err != nil {
		return HealOutcome{}, nil, err
	}
	t, err := s.healable(target)
	if err != nil {
		return HealOutcome{}, nil, err
	}
	r, err := d.RollNotation(healer, "heal "+t.Name, dice)
	if err != nil {
		return HealOutcome{}, nil, err
	}
	evs := diceEvents(d)
	before := s.hpOf(t)
	hp, maxHP, hev := s.heal(t, max(0, r.Total))
	evs = append(evs, hev...)
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s heals %s for %d", s.Game.Combat.Round, healer, t.Name, hp-before))
	return HealOutcome{Target: t.Name, Amount: hp - before, HP: hp, MaxHP: maxHP}, evs, nil
}

func (s *State) hpOf(t Combatant) int {
	switch t.Kind {
	case KindNPC:
		return s.World.NPCs[t.Ref].HP
	case KindPC:
		return s.Character(t.Ref).HP
	}
	return 0
}

// ApplyDamage rolls dice (at most 6d12+20) of damage that no weapon deals —
// a falling beam, a fire, a trap — and applies it to a combatant standing,
// ignoring armour.
func (s *State) ApplyDamage(d *Dice, target, dice, reason string) (AttackOutcome, []Event, error) {
	if s.Game.Combat == nil {
		return AttackOutcome{}, nil, Errorf(EINVALID, "There is no fight under way.")
	}
	if err := damageCap.check(dice, "Damage"); err != nil {
		return AttackOutcome{}, nil, err
	}
	t, err := s.standing(target)
	if err != nil {
		return AttackOutcome{}, nil, err
	}
	if reason == "" {
		reason = "damage"
	}
	r, err := d.RollNotation("DM", reason+" on "+t.Name, dice)
	if err != nil {
		return AttackOutcome{}, nil, err
	}
	evs := diceEvents(d)
	out := AttackOutcome{Attacker: "DM", Target: t.Name, Result: AttackResult{Hit: true, Damage: max(0, r.Total)}}
	var dev []Event
	out.HP, out.MaxHP, out.Down, dev = s.damage(t, out.Result.Damage, true)
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s: %d damage to %s", s.Game.Combat.Round, reason, out.Result.Damage, t.Name))
	return out, append(evs, dev...), nil
}

// UseItem makes actor use a consumable it owns (an item instance id or
// name) on target (itself when empty, or an ally). The item is used up.
func (s *State) UseItem(d *Dice, actor, item, target string) (HealOutcome, []Event, error) {
	if s.Game.Combat == nil {
		return HealOutcome{}, nil, Errorf(EINVALID, "There is no fight under way.")
	}
	a, ok := s.resolveCombatant(actor)
	if !ok || !s.CanAct(a) {
		return HealOutcome{}, nil, Errorf(EINVALID, "%q cannot act now.", actor)
	}
	ownerType := OwnerCharacter
	if a.Kind == KindNPC {
		ownerType = OwnerNPC
	}
	owned := s.World.ItemsOwned(ownerType, a.Ref)
	i := slices.IndexFunc(owned, func(it *Item) bool { return it.ID == item || equalFoldTrim(it.Name, item) })
	if i < 0 {
		if it, ok := s.World.Items[item]; ok {
			return HealOutcome{}, nil, Errorf(EFORBIDDEN, "%s does not own %s (%s).", a.Name, it.Name, it.ID)
		}
		var names []string
		for _, it := range owned {
			names = append(names, fmt.Sprintf("%s (%s)", it.Name, it.ID))
		}
		if len(names) == 0 {
			names = []string{"nothing"}
		}
		return HealOutcome{}, nil, Errorf(ENOTFOUND, "%s has no %q; carrying: %s.", a.Name, item, strings.Join(names, ", "))
	}
	it := owned[i]
	c, ok := s.Catalogue.Consumable(it.Template)
	if !ok {
		return HealOutcome{}, nil, Errorf(EINVALID, "%s cannot be used up in a fight; only consumables (potions, bandages) can.", it.Name)
	}
	if target == "" {
		target = string(a.Entry)
	}
	t, err := s.healable(target)
	if err != nil {
		return HealOutcome{}, nil, err
	}
	if s.Side(t) != s.Side(a) {
		return HealOutcome{}, nil, Errorf(EINVALID, "%s would not waste %s on a foe.", a.Name, it.Name)
	}
	if hp, maxHP := s.hpOf(t), s.maxHPOf(t); hp >= maxHP {
		return HealOutcome{}, nil, wasted(t.Name, it.Name, hp, maxHP)
	}
	r, err := d.RollNotation(a.Name, it.Name+" on "+t.Name, s.Ruleset().Dice(c.HealRoll()))
	if err != nil {
		return HealOutcome{}, nil, err
	}
	evs := diceEvents(d)
	before := s.hpOf(t)
	hp, maxHP, hev := s.heal(t, max(0, r.Total))
	evs = append(evs, hev...)
	delete(s.World.Items, it.ID)
	if a.Kind == KindPC {
		evs = append(evs, ItemRemovedEvent(a.Ref, it))
	}
	s.Game.Combat.Log = append(s.Game.Combat.Log, fmt.Sprintf("Round %d: %s uses %s on %s (+%d)", s.Game.Combat.Round, a.Name, it.Name, t.Name, hp-before))
	return HealOutcome{Target: t.Name, Amount: hp - before, HP: hp, MaxHP: maxHP}, evs, nil
}

// JoinCombat brings an NPC at the fight's location into the fight with a
// rolled place in the initiative; it fights on its current side (hostile
// or not).
func (s *State) JoinCombat(d *Dice, npc string) (Combatant, []Event, error) {
	cb := s.Game.Combat
	if cb == nil {
		return Combatant{}, nil, Errorf(EINVALID, "There is no fight to join.")
	}
	n := s.World.FindNPC(npc, cb.Location)
	if n == nil {
		return Combatant{}, nil, Errorf(ENOTFOUND, "There is no NPC %q; NPCs here: %s.", npc, s.npcNames(cb.Location))
	}
	if n.Location != cb.Location {
		return Combatant{}, nil, Errorf(EINVALID, "%s is not here; NPCs here: %s.", n.Name, s.npcNames(cb.Location))
	}
	if _, in := cb.Entry(NPCEntry(n.ID)); in {
		return Combatant{}, nil, Errorf(ECONFLICT, "%s is already in the fight.", n.Name)
	}
	if !n.Standing() {
		return Combatant{}, nil, Errorf(EINVALID, "%s cannot fight.", n.Name)
	}
	n.Hidden = false
	cur := cb.Current().Entry
	e := s.npcCombatant(d, n)
	cb.Order = append(cb.Order, e)
	SortInitiative(cb.Order)
	cb.Index = slices.IndexFunc(cb.Order, func(x Combatant) bool { return x.Entry == cur })
	cb.Log = append(cb.Log, fmt.Sprintf("Round %d: %s joins the fight", cb.Round, n.Name))
	return e, diceEvents(d), nil
}

// DrinkItem makes character c use a consumable it carries (an item
// instance id or name) outside a fight: a potion heals out of combat too.
// The item is used up. In a fight, UseItem (on the user's turn) applies.
func (s *State) DrinkItem(d *Dice, characterID, item string) (HealOutcome, []Event, error) {
	if s.Game.Combat != nil {
		return HealOutcome{}, nil, Errorf(EINVALID, "In a fight, use an item on your turn.")
	}
	c := s.Character(characterID)
	if c == nil {
		return HealOutcome{}, nil, Errorf(ENOTFOUND, "No character %q.", characterID)
	}
	owned := s.World.ItemsOwned(OwnerCharacter, c.ID)
	i := slices.IndexFunc(owned, func(it *Item) bool { return it.ID == item || equalFoldTrim(it.Name, item) })
	if i < 0 {
		return HealOutcome{}, nil, Errorf(ENOTFOUND, "%s has no %q.", c.Name, item)
	}
	it := owned[i]
	cons, ok := s.Catalogue.Consumable(it.Template)
	if !ok {
		return HealOutcome{}, nil, Errorf(EINVALID, "%s is not something to drink or apply; only consumables (potions, bandages) are.", it.Name)
	}
	if HasStatus(c.Statuses, StatusDead) {
		return HealOutcome{}, nil, Errorf(EINVALID, "%s is dead.", c.Name)
	}
	if c.HP >= c.MaxHP {
		return HealOutcome{}, nil, wasted(c.Name, it.Name, c.HP, c.MaxHP)
	}
	r, err := d.RollNotation(c.Name, it.Name, s.Ruleset().Dice(cons.HealRoll()))
	if err != nil {
		return HealOutcome{}, nil, err
	}
	evs := diceEvents(d)
	before := c.HP
	c.HP = min(c.MaxHP, c.HP+max(0, r.Total))
	if c.HP > 0 {
		c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
	}
	evs = append(evs, HealEvent(c.Name, c.HP-before, c.HP, c.MaxHP))
	delete(s.World.Items, it.ID)
	evs = append(evs, ItemRemovedEvent(c.ID, it))
	return HealOutcome{Target: c.Name, Amount: c.HP - before, HP: c.HP, MaxHP: c.MaxHP}, evs, nil
}

// wasted is the warning that stops a remedy used on one who is unhurt.
func wasted(who, item string, hp, maxHP int) error {
	return Errorf(EINVALID, "%s is unhurt (%d/%d HP): the %s would be wasted. Keep it for a wound, or give it to a hurt or fallen friend.",
		who, hp, maxHP, strings.ToLower(item))
}
