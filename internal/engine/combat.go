package engine

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Kinds of initiative entries.
const (
	KindBookend = "bookend"
	KindNPC     = "npc"
	KindPC      = "pc"
)

// Combat outcomes (PROTOCOL.md, seed 000's CombatResultPayload).
const (
	OutcomePlayerWin  = "player_win"
	OutcomePlayerFlee = "player_flee"
	OutcomePlayerDie  = "player_die"
	OutcomeNPCFlee    = "npc_flee"
	OutcomeForcedEnd  = "forced_end"
	OutcomeErrorAbort = "error_abort"
)

// ValidOutcome reports whether o is a known outcome.
func ValidOutcome(o string) bool {
	switch o {
	case OutcomePlayerWin, OutcomePlayerFlee, OutcomePlayerDie, OutcomeNPCFlee, OutcomeForcedEnd, OutcomeErrorAbort:
		return true
	}
	return false
}

// Combatant is one entry of the initiative order.
type Combatant struct {
	Entry      string `json:"entry"` // "dm", "dm:<npc>", "pc:<seat>"
	Kind       string `json:"kind"`
	Ref        string `json:"ref,omitempty"` // NPC id or character id
	Name       string `json:"name"`
	Initiative int    `json:"initiative"`
	Mod        int    `json:"mod"`
}

// Combat is the state of a running fight.
type Combat struct {
	ID       string      `json:"id"`
	Location string      `json:"location"`
	Round    int         `json:"round"`
	Index    int         `json:"index"`
	Order    []Combatant `json:"order"`
	// SavedQueue is the exploration queue, restored when the fight ends.
	SavedQueue []string `json:"saved_queue"`
	// Ending is set when an end condition holds: the next turn is the DM's
	// forced resolution, which must end the combat with this outcome.
	Ending string   `json:"ending,omitempty"`
	Log    []string `json:"log"`
	// Effects are the timed effects on combatants.
	Effects []Effect `json:"effects,omitempty"`
}

// MaxRounds bounds a fight: when round MaxRounds is over, the fight ends
// with forced_end, so every fight ends.
const MaxRounds = 30

// Current returns the active entry.
func (c *Combat) Current() Combatant {
	if c.Index < 0 || c.Index >= len(c.Order) {
		return Combatant{Entry: BookendEntry, Kind: KindBookend, Name: "DM"}
	}
	return c.Order[c.Index]
}

// Entry returns the combatant with entry id, or false.
func (c *Combat) Entry(id string) (Combatant, bool) {
	for _, e := range c.Order {
		if e.Entry == id {
			return e, true
		}
	}
	return Combatant{}, false
}

func (c *Combat) remove(entry string) {
	i := slices.IndexFunc(c.Order, func(e Combatant) bool { return e.Entry == entry })
	if i < 0 {
		return
	}
	c.Order = slices.Delete(c.Order, i, i+1)
	c.Effects = slices.DeleteFunc(c.Effects, func(x Effect) bool { return x.Entry == entry })
	if i < c.Index {
		c.Index--
	}
	if c.Index >= len(c.Order) {
		c.Index = 0
	}
}

// CombatResult is what a fight left behind, given to the narrative agent's
// next turn (seed 000's last_combat_result).
type CombatResult struct {
	CombatID string   `json:"combat_id"`
	Outcome  string   `json:"outcome"`
	XP       int      `json:"xp"`
	Gold     int      `json:"gold"`
	Loot     []string `json:"loot"`
	Defeated []string `json:"defeated"`
	LevelUps []string `json:"level_ups,omitempty"`
	Summary  string   `json:"summary"`
	// Shares says who got what of XP and Gold; Missed names the party
	// members who were not standing at the end and got nothing.
	Shares []RewardShare `json:"shares,omitempty"`
	Missed []string      `json:"missed,omitempty"`
}

// RewardShare is one character's part of a fight's rewards.
type RewardShare struct {
	Name string `json:"name"`
	XP   int    `json:"xp"`
	Gold int    `json:"gold"`
}

// DiceEvents drains the rolls recorded by d into `dice` events.
func DiceEvents(d *Dice) []Event { return diceEvents(d) }

func diceEvents(d *Dice) []Event {
	var out []Event
	for _, r := range d.TakeLog() {
		out = append(out, DiceEvent(r))
	}
	return out
}

// fighter builds the rules view of a combat entry.
func (s *State) fighter(e Combatant) Fighter {
	switch e.Kind {
	case KindNPC:
		if n := s.World.NPCs[e.Ref]; n != nil {
			return Fighter{Name: n.Name, Level: n.Level, Stats: n.Stats, Weapon: s.Catalogue.Weapon(n.Weapon), Armour: s.Catalogue.Armour(n.Armour), Statuses: n.Statuses}
		}
	case KindPC:
		if c := s.Character(e.Ref); c != nil {
			return Fighter{Name: c.Name, Level: c.Level, Stats: c.Stats, Weapon: s.Catalogue.Weapon(c.Weapon), Armour: s.Catalogue.Armour(c.Armour), Statuses: c.Statuses}
		}
	}
	return Fighter{Name: e.Name}
}

func (s *State) npcCombatant(d *Dice, n *NPC) Combatant {
	rs := s.Ruleset()
	f := Fighter{Name: n.Name, Level: n.Level, Stats: n.Stats}
	r := rs.Initiative(d, f)
	return Combatant{Entry: NPCEntry(n.ID), Kind: KindNPC, Ref: n.ID, Name: n.Name, Initiative: r.Total, Mod: rs.InitiativeMod(f)}
}

func (s *State) pcCombatant(d *Dice, c *Character) Combatant {
	rs := s.Ruleset()
	f := Fighter{Name: c.Name, Level: c.Level, Stats: c.Stats}
	r := rs.Initiative(d, f)
	return Combatant{Entry: PCEntry(c.Seat), Kind: KindPC, Ref: c.ID, Name: c.Name, Initiative: r.Total, Mod: rs.InitiativeMod(f)}
}

// SortInitiative orders combatants by initiative, then modifier, then name
// (seed 002), and puts the DM bookend first.
func SortInitiative(order []Combatant) {
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if (a.Kind == KindBookend) != (b.Kind == KindBookend) {
			return a.Kind == KindBookend
		}
		if a.Initiative != b.Initiative {
			return a.Initiative > b.Initiative
		}
		if a.Mod != b.Mod {
			return a.Mod > b.Mod
		}
		return strings.ToLower(a.Name) < strings.ToLower(b.Name)
	})
}

// StartCombat starts a fight at the party's location against the named
// NPCs (ids or names) and every other hostile NPC standing there. It rolls
// initiative for everyone, saves the exploration queue and switches the
// table to combat mode. The first turn is the DM's bookend.
func (s *State) StartCombat(d *Dice, foes []string) (*Combat, []Event, error) {
	if s.Game.Mode == ModeCombat {
		return nil, nil, Errorf(ECONFLICT, "A fight is already under way.")
	}
	loc := s.Game.Location
	in := map[string]*NPC{}
	for _, ref := range foes {
		n := s.World.FindNPC(ref, loc)
		if n == nil {
			return nil, nil, Errorf(ENOTFOUND, "There is no NPC %q; NPCs here: %s.", ref, s.npcNames(loc))
		}
		if n.Location != loc || n.Hidden {
			return nil, nil, Errorf(EINVALID, "%s is not here; NPCs here: %s.", n.Name, s.npcNames(loc))
		}
		if !n.Standing() {
			return nil, nil, Errorf(EINVALID, "%s cannot fight (%s).", n.Name, strings.Join(n.Statuses, ", "))
		}
		in[n.ID] = n
	}
	for _, n := range s.World.NPCsAt(loc) {
		if n.Hostile && n.Standing() {
			in[n.ID] = n
		}
	}
	if len(in) == 0 {
		return nil, nil, Errorf(EINVALID, "A fight needs at least one opponent; NPCs here: %s.", s.npcNames(loc))
	}
	var fighters int
	for _, c := range s.Party {
		if c.Conscious() {
			fighters++
		}
	}
	if fighters == 0 {
		return nil, nil, Errorf(EINVALID, "No conscious character can fight.")
	}
	s.Game.CombatSeq++
	cb := &Combat{
		ID: fmt.Sprintf("combat-%d", s.Game.CombatSeq), Location: loc, Round: 1,
		SavedQueue: slices.Clone(s.Game.Queue), Log: []string{},
		Order: []Combatant{{Entry: BookendEntry, Kind: KindBookend, Name: "DM"}},
	}
	for _, c := range s.Party {
		if c.Conscious() {
			cb.Order = append(cb.Order, s.pcCombatant(d, c))
		}
	}
	ids := make([]string, 0, len(in))
	for id := range in {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	ids = s.scaleEncounter(ids, foes)
	for _, id := range ids {
		n := s.World.NPCs[id]
		n.Hostile = true
		n.Behavior = "hostile"
		cb.Order = append(cb.Order, s.npcCombatant(d, n))
	}
	SortInitiative(cb.Order)
	s.Game.Combat = cb
	s.Game.Mode = ModeCombat
	evs := diceEvents(d)
	evs = append(evs, ModeEvent(ModeCombat))
	return cb, evs, nil
}

// PartyPower is the fighting strength of the conscious party, in level-1
// characters: the sum of their levels. The adventures are written for a
// power of 3 (three level-1 characters).
func (s *State) PartyPower() int {
	p := 0
	for _, c := range s.Party {
		if c.Conscious() {
			p += max(c.Level, 1)
		}
	}
	return p
}

// encounterPower is the party power the adventures' encounters are
// written for.
const encounterPower = 3

// scaleEncounter fits a fight to the party (issue 13: two level-1
// characters were wiped out where three won). With a weaker party than
// the encounter is written for, the foes named join and the others only
// up to power+1 in all (the strongest; the rest hang back and may join
// later), and each foe joining for the first time has its HP scaled by
// (power+1)/(encounterPower+1), at least half; a stronger party faces
// tougher foes (up to 1.5 times the HP). ids are the NPCs that would
// join, sorted; the result is the ones that do.
func (s *State) scaleEncounter(ids, named []string) []string {
	power := s.PartyPower()
	if power < encounterPower && len(ids) > power+1 {
		first := map[string]bool{}
		for _, ref := range named {
			if n := s.World.FindNPC(ref, s.Game.Location); n != nil {
				first[n.ID] = true
			}
		}
		ranked := slices.Clone(ids)
		sort.SliceStable(ranked, func(i, j int) bool {
			a, b := s.World.NPCs[ranked[i]], s.World.NPCs[ranked[j]]
			if first[a.ID] != first[b.ID] {
				return first[a.ID]
			}
			return a.Level > b.Level
		})
		keep := map[string]bool{}
		for i, id := range ranked {
			keep[id] = first[id] || i < power+1
		}
		ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !keep[id] })
	}
	f := max(0.5, min(1.5, float64(power+1)/float64(encounterPower+1)))
	for _, id := range ids {
		n := s.World.NPCs[id]
		if f == 1 || slices.Contains(s.Game.Scaled, id) {
			continue
		}
		s.Game.Scaled = append(s.Game.Scaled, id)
		n.MaxHP = max(1, int(float64(n.MaxHP)*f+0.5))
		n.HP = max(1, min(n.MaxHP, int(float64(n.HP)*f+0.5)))
	}
	return ids
}

// joinCombat gives a PC arriving mid-fight a rolled place in the order.
func (s *State) joinCombat(d *Dice, c *Character) {
	cb := s.Game.Combat
	cur := cb.Current().Entry
	cb.Order = append(cb.Order, s.pcCombatant(d, c))
	SortInitiative(cb.Order)
	cb.Index = slices.IndexFunc(cb.Order, func(e Combatant) bool { return e.Entry == cur })
	if cb.Index < 0 {
		cb.Index = 0
	}
}

func (s *State) npcNames(loc string) string {
	var names []string
	for _, n := range s.World.NPCsAt(loc) {
		names = append(names, fmt.Sprintf("%s (%s)", n.Name, n.ID))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// CanAct reports whether an initiative entry can take its turn.
func (s *State) CanAct(e Combatant) bool {
	switch e.Kind {
	case KindBookend:
		return true
	case KindNPC:
		n := s.World.NPCs[e.Ref]
		return n != nil && n.Standing()
	case KindPC:
		c := s.Character(e.Ref)
		return c != nil && c.Conscious() && !HasStatus(c.Statuses, StatusFled)
	}
	return false
}

// CheckEnd returns the outcome if a fight's end condition holds: victory
// (no hostile NPC standing), all foes fled, TPK (no PC conscious) or the
// party fled. It returns "" while the fight goes on.
func (s *State) CheckEnd() string {
	cb := s.Game.Combat
	if cb == nil {
		return ""
	}
	var foesStanding, foesDown, pcsUp, pcsDown, pcsFled int
	for _, e := range cb.Order {
		switch e.Kind {
		case KindNPC:
			n := s.World.NPCs[e.Ref]
			if n == nil || !n.Hostile {
				continue
			}
			switch {
			case n.Standing():
				foesStanding++
			case !HasStatus(n.Statuses, StatusFled):
				foesDown++
			}
		case KindPC:
			c := s.Character(e.Ref)
			switch {
			case c == nil:
			case HasStatus(c.Statuses, StatusFled):
				pcsFled++
			case c.Conscious():
				pcsUp++
			default:
				pcsDown++
			}
		}
	}
	switch {
	case pcsUp == 0 && pcsDown > 0:
		return OutcomePlayerDie
	case pcsUp == 0 && pcsFled > 0:
		return OutcomePlayerFlee
	case pcsUp == 0:
		return OutcomeForcedEnd
	case foesStanding == 0 && foesDown > 0:
		return OutcomePlayerWin
	case foesStanding == 0:
		return OutcomeNPCFlee
	}
	return ""
}

// AdvanceTurn ends the current entry's turn (its end-of-turn effects
// tick) and moves the initiative to the next entry that can act, wrapping
// to a new round (which starts with the DM bookend). Entering a turn ticks
// the bearer's start-of-turn effects: poison may knock it out, a stun
// skips the turn. If an end condition holds, or round MaxRounds is over,
// it sets Combat.Ending instead and reports ended. The events are those
// of the ticks.
func (s *State) AdvanceTurn(d *Dice) (ended bool, evs []Event) {
	cb := s.Game.Combat
	if cb == nil {
		return false, nil
	}
	if cur := cb.Current(); cur.Kind != KindBookend {
		_, tev := s.tick(d, cur, TickEnd)
		evs = append(evs, tev...)
	}
	end := func() bool {
		if out := s.CheckEnd(); out != "" {
			cb.Ending = out
			return true
		}
		return false
	}
	if end() {
		return true, evs
	}
	// Each entry is entered at most twice (a stun may skip a whole round).
	for range 2*len(cb.Order) + 2 {
		cb.Index++
		if cb.Index >= len(cb.Order) {
			cb.Index = 0
			cb.Round++
			if cb.Round > MaxRounds {
				cb.Ending = OutcomeForcedEnd
				return true, evs
			}
		}
		e := cb.Order[cb.Index]
		if !s.CanAct(e) {
			continue
		}
		evs = append(evs, s.beginTurn(e)...)
		skip, tev := s.tick(d, e, TickStart)
		evs = append(evs, tev...)
		if end() {
			return true, evs
		}
		if skip {
			_, tev := s.tick(d, e, TickEnd)
			evs = append(evs, tev...)
			continue
		}
		if s.CanAct(e) {
			return false, evs
		}
	}
	cb.Ending = OutcomeForcedEnd // nobody can act: unreachable while CheckEnd holds
	return true, evs
}

// SettleNarrativeTurn ends a turn of narrative combat (no initiative
// queue): every effect ticks once, the beat counts as a round, and the end
// conditions are checked as in tactical combat.
func (s *State) SettleNarrativeTurn(d *Dice) (ended bool, evs []Event) {
	cb := s.Game.Combat
	if cb == nil {
		return false, nil
	}
	for _, e := range cb.Order {
		if e.Kind == KindBookend || !s.CanAct(e) {
			continue
		}
		_, a := s.tick(d, e, TickStart)
		_, b := s.tick(d, e, TickEnd)
		evs = append(append(evs, a...), b...)
	}
	cb.Round++
	if out := s.CheckEnd(); out != "" {
		cb.Ending = out
		return true, evs
	}
	if cb.Round > MaxRounds {
		cb.Ending = OutcomeForcedEnd
		return true, evs
	}
	return false, evs
}

// beginTurn ticks the statuses that last "until the bearer's next turn".
func (s *State) beginTurn(e Combatant) []Event {
	st := s.statusesOf(e)
	if !HasStatus(st, StatusDefending) {
		return nil
	}
	s.setStatuses(e, RemoveStatus(st, StatusDefending))
	return []Event{StatusRemovedEvent(e.Name, StatusDefending)}
}

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
		if e.Entry == ref || e.Ref == ref || strings.EqualFold(e.Name, ref) {
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

func (s *State) side(e Combatant) string {
	if e.Kind == KindPC {
		return "party"
	}
	if n := s.World.NPCs[e.Ref]; n != nil && !n.Hostile {
		return "party"
	}
	return "foes"
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
	t, ok := s.resolveCombatant(target)
	standingFoes := func(e Combatant) bool { return s.side(e) != s.side(a) && s.CanAct(e) }
	if !ok {
		return AttackOutcome{}, nil, Errorf(ENOTFOUND, "%q is not in this fight; targets: %s.", target, s.combatantNames(standingFoes))
	}
	if t.Entry == a.Entry {
		return AttackOutcome{}, nil, Errorf(EINVALID, "%s cannot attack itself; targets: %s.", a.Name, s.combatantNames(standingFoes))
	}
	if s.side(t) == s.side(a) {
		return AttackOutcome{}, nil, Errorf(EINVALID, "%s is an ally of %s; targets: %s.", t.Name, a.Name, s.combatantNames(standingFoes))
	}
	if !s.CanAct(t) {
		return AttackOutcome{}, nil, Errorf(EINVALID, "%s is already down; living targets: %s.", t.Name, s.combatantNames(standingFoes))
	}
	fa, ft := s.fighter(a), s.fighter(t)
	res := s.Ruleset().Attack(d, fa, ft, s.advantage(a))
	evs := diceEvents(d)
	out := AttackOutcome{Attacker: a.Name, Target: t.Name, Result: res}
	if HasStatus(fa.Statuses, StatusOffBalance) {
		s.setStatuses(a, RemoveStatus(fa.Statuses, StatusOffBalance))
		evs = append(evs, StatusRemovedEvent(a.Name, StatusOffBalance))
	}
	if res.Fumble {
		s.setStatuses(a, AddStatus(s.fighter(a).Statuses, StatusOffBalance))
		evs = append(evs, StatusAddedEvent(a.Name, StatusOffBalance))
	}
	var dev []Event
	out.HP, out.MaxHP, out.Down, dev = s.damage(t, res.Damage, res.Hit)
	evs = append(evs, dev...)
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
		if e.Kind == KindBookend || s.side(e) == s.side(a) || !s.CanAct(e) {
			continue
		}
		f := s.fighter(e)
		if best == nil || Mod(f.Stats.AGI) > Mod(best.Stats.AGI) {
			best = &f
		}
	}
	success := true
	if best != nil {
		mine := rs.Contest(d, fa, "flee")
		theirs := rs.Contest(d, *best, "chase "+fa.Name)
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

// EndCombat ends the fight. When an end condition holds its outcome wins
// over the one proposed; otherwise the DM may end a fight only by flight,
// surrender (npc_flee) or forced_end. Rewards are computed here from the
// defeated NPCs: XP by level and their gold, shared among the PCs still
// standing, and their items dropped where the party can take them. A
// defeated party (player_die) wakes at the start location with 1 HP.
func (s *State) EndCombat(outcome, summary string) (CombatResult, []Event, error) {
	cb := s.Game.Combat
	if cb == nil {
		return CombatResult{}, nil, Errorf(EINVALID, "There is no fight to end.")
	}
	outcome, err := s.endOutcome(cb, outcome)
	if err != nil {
		return CombatResult{}, nil, err
	}
	res := CombatResult{CombatID: cb.ID, Outcome: outcome, Loot: []string{}, Defeated: []string{}, Summary: summary}
	var evs []Event
	s.clearEffects()
	s.collectSpoils(cb, &res)
	standing := s.clearCombatStatuses()
	if outcome == OutcomePlayerDie {
		res.XP, res.Gold = 0, 0
		evs = append(evs, s.reviveAtStart())
	} else {
		evs = append(evs, s.wakeUnconscious()...)
	}
	if outcome == OutcomePlayerFlee && s.Game.Previous != "" {
		evs = append(evs, s.retreat())
	}
	if outcome != OutcomePlayerDie {
		res.LevelUps, res.Shares = s.shareRewards(res.XP, res.Gold, standing)
		for _, c := range s.Party {
			if !slices.Contains(standing, c) && (res.XP > 0 || res.Gold > 0) {
				res.Missed = append(res.Missed, c.Name)
			}
		}
	}
	s.Game.Queue = s.restoredQueue(cb)
	s.Game.Combat = nil
	s.Game.Mode = ModeNarrative
	s.Game.LastCombatResult = &res
	s.Game.ResultSeen = false
	evs = append(evs, CombatEndedEvent(res), ModeEvent(ModeNarrative))
	return res, evs, nil
}

// endOutcome is the outcome a fight ends with: the end condition that holds
// (cb.Ending), else the DM's proposal if it is one the DM may choose.
func (s *State) endOutcome(cb *Combat, proposed string) (string, error) {
	if cb.Ending != "" {
		return cb.Ending, nil
	}
	switch proposed {
	case OutcomePlayerFlee, OutcomeNPCFlee, OutcomeForcedEnd, OutcomeErrorAbort:
		return proposed, nil
	case OutcomePlayerWin, OutcomePlayerDie:
		return "", Errorf(EINVALID, "The fight is not over: foes standing: %s; party standing: %s. Use continue_combat, or end it with player_flee, npc_flee or forced_end.",
			s.combatantNames(func(e Combatant) bool { return s.side(e) == "foes" && s.CanAct(e) }),
			s.combatantNames(func(e Combatant) bool { return s.side(e) == "party" && s.CanAct(e) }))
	}
	return "", Errorf(EINVALID, "Unknown outcome %q; use player_win, player_flee, player_die, npc_flee or forced_end.", proposed)
}

// collectSpoils adds what the dead NPCs of cb leave to res: their names,
// XP by level and gold (taken from them), and their items, dropped at the
// fight's location.
func (s *State) collectSpoils(cb *Combat, res *CombatResult) {
	for _, e := range cb.Order {
		if e.Kind != KindNPC {
			continue
		}
		n := s.World.NPCs[e.Ref]
		if n == nil || !HasStatus(n.Statuses, StatusDead) {
			continue
		}
		res.Defeated = append(res.Defeated, n.Name)
		res.XP += XPValue(n.Level)
		res.Gold += n.Gold
		n.Gold = 0
		for _, it := range s.World.ItemsOwned(OwnerNPC, n.ID) {
			it.OwnerType, it.OwnerID = OwnerLocation, cb.Location
			res.Loot = append(res.Loot, it.Name)
		}
	}
}

// clearCombatStatuses removes the statuses that last only a fight
// (defending, off-balance, and fled for PCs) and returns the PCs still
// conscious, who share the rewards.
func (s *State) clearCombatStatuses() (standing []*Character) {
	for _, c := range s.Party {
		c.Statuses = RemoveStatus(RemoveStatus(RemoveStatus(c.Statuses, StatusDefending), StatusOffBalance), StatusFled)
		if c.Conscious() {
			standing = append(standing, c)
		}
	}
	for _, n := range s.World.NPCs {
		n.Statuses = RemoveStatus(RemoveStatus(n.Statuses, StatusDefending), StatusOffBalance)
	}
	return standing
}

// reviveAtStart wakes a defeated party at the start location with 1 HP and
// half its gold.
func (s *State) reviveAtStart() Event {
	for _, c := range s.Party {
		c.HP = 1
		c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
		c.Gold /= 2
	}
	s.moveParty(s.World.Start)
	return s.partyAt(s.World.Start)
}

// wakeUnconscious brings the PCs knocked out during a fight the party
// survived back to at least 1 HP.
func (s *State) wakeUnconscious() []Event {
	var evs []Event
	for _, c := range s.Party {
		if HasStatus(c.Statuses, StatusUnconscious) {
			c.HP = max(c.HP, 1)
			c.Statuses = RemoveStatus(c.Statuses, StatusUnconscious)
			evs = append(evs, HealEvent(c.Name, 1, c.HP, c.MaxHP))
		}
	}
	return evs
}

// retreat takes a fleeing party back to where it came from.
func (s *State) retreat() Event {
	s.moveParty(s.Game.Previous)
	return s.partyAt(s.Game.Location)
}

// partyAt is the event of the party set down at location, with its name
// when the world knows it (the log shows names, never ids).
func (s *State) partyAt(location string) Event {
	if l := s.World.Locations[location]; l != nil {
		return PartyMovedEvent(l)
	}
	return PartyAtEvent(location)
}

// shareRewards splits xp and gold evenly among standing (the first takes
// the odd gold) and returns the level-ups it caused.
func (s *State) shareRewards(xp, gold int, standing []*Character) (levelUps []string, shares []RewardShare) {
	if len(standing) == 0 {
		return nil, nil
	}
	xpEach, goldEach := xp/len(standing), gold/len(standing)
	for i, c := range standing {
		g := goldEach
		if i == 0 {
			g += gold - goldEach*len(standing)
		}
		c.Gold += g
		if s.GainXP(c, xpEach) {
			levelUps = append(levelUps, fmt.Sprintf("%s reaches level %d", c.Name, c.Level))
		}
		if xpEach > 0 || g > 0 {
			shares = append(shares, RewardShare{Name: c.Name, XP: xpEach, Gold: g})
		}
	}
	return levelUps, shares
}

// restoredQueue is the exploration queue saved when cb began (seed 002),
// keeping PCs who joined during the fight and dropping those who left.
func (s *State) restoredQueue(cb *Combat) []string {
	q := []string{}
	for _, e := range cb.SavedQueue {
		if s.CharacterBySeat(strings.TrimPrefix(e, "pc:")) != nil {
			q = append(q, e)
		}
	}
	for _, c := range s.Party {
		if !slices.Contains(q, PCEntry(c.Seat)) {
			q = append(q, PCEntry(c.Seat))
		}
	}
	return q
}

// GainXP adds XP to c and levels it up as often as the XP allows. Each level
// adds a fifth of the class's base HP (at least 1) to max HP and heals as
// much. It reports whether c levelled up.
func (s *State) GainXP(c *Character, xp int) bool {
	c.XP += xp
	up := false
	for c.XP >= XPForLevel(c.Level+1) {
		c.Level++
		gain := max(1, c.MaxHP/(4+c.Level))
		if cls, ok := s.Catalogue.Class(c.Class); ok {
			base := cls.HP
			if s.Config.Ruleset == RulesetD20 {
				base = cls.HPD20
			}
			gain = max(1, base/5)
		}
		c.MaxHP += gain
		c.HP += gain
		up = true
	}
	return up
}

func (s *State) moveParty(loc string) {
	if loc == s.Game.Location {
		return
	}
	from := s.Game.Location
	s.Game.Previous = from
	s.Game.Location = loc
	for _, c := range s.Party {
		c.Location = loc
	}
	// NPCs following the party come along.
	for _, n := range s.World.NPCs {
		if n.Location == from && n.Behavior == "following" && n.Alive() {
			n.Location = loc
		}
	}
}
