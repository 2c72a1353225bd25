package engine

import (
	"fmt"
	"slices"
	"strings"
)

// Effects the rules know. Each has a default duration in rounds, a tick
// point (the start or the end of the bearer's turn) and what a tick does.
const (
	EffectPoisoned = "poisoned" // start of turn: takes damage (1d6 under d100, 1d4 under d20)
	EffectStunned  = "stunned"  // start of turn: the turn is skipped
	EffectBlessed  = "blessed"  // attacks with advantage; lapses at the end of the bearer's turn
	EffectWeakened = "weakened" // attacks with disadvantage; lapses at the end of the bearer's turn
	EffectShielded = "shielded" // harder to hit (as defending); lapses at the start of the bearer's turn
	EffectHidden   = "hidden"   // attacks with advantage, attacked with disadvantage; ends when the bearer strikes
	EffectAsleep   = "asleep"   // loses its turns, attacked with advantage; a blow wakes it
)

// Tick points.
const (
	TickStart = "start"
	TickEnd   = "end"
)

type effectRule struct {
	tick   string
	rounds int
	d100   string // damage per tick under d100
	d20    string // damage per tick under d20
	adv    int
}

var effectRules = map[string]effectRule{
	EffectPoisoned: {tick: TickStart, rounds: 3, d100: "1d6", d20: "1d4"},
	EffectStunned:  {tick: TickStart, rounds: 1},
	EffectBlessed:  {tick: TickEnd, rounds: 3, adv: 1},
	EffectWeakened: {tick: TickEnd, rounds: 2, adv: -1},
	EffectShielded: {tick: TickStart, rounds: 1},
	EffectHidden:   {tick: TickEnd, rounds: 2, adv: 1},
	EffectAsleep:   {tick: TickStart, rounds: 2},
}

// EffectNames lists the known effects.
func EffectNames() []string {
	return []string{EffectPoisoned, EffectStunned, EffectBlessed, EffectWeakened, EffectShielded, EffectHidden, EffectAsleep}
}

// Effect is a timed effect on a combatant. Rounds counts the ticks left.
type Effect struct {
	Name   string  `json:"name"`
	Entry  EntryID `json:"entry"`
	Rounds int     `json:"rounds"`
	Tick   string  `json:"tick"`
	Dice   string  `json:"dice,omitempty"`
	Source string  `json:"source,omitempty"`
}

// maxEffectRounds bounds how long the DM may make an effect last.
const maxEffectRounds = 10

// ApplyEffect puts a known effect on a combatant for rounds (0: the
// effect's default). Applying it again refreshes its duration.
func (s *State) ApplyEffect(target, name string, rounds int, source string) ([]Event, error) {
	cb := s.Game.Combat
	if cb == nil {
		return nil, Errorf(EINVALID, "Effects apply only during a fight.")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	rule, ok := effectRules[name]
	if !ok {
		return nil, Errorf(EINVALID, "Unknown effect %q; effects: %s.", name, strings.Join(EffectNames(), ", "))
	}
	if rounds == 0 {
		rounds = rule.rounds
	}
	if rounds < 1 || rounds > maxEffectRounds {
		return nil, Errorf(EINVALID, "An effect lasts 1 to %d rounds.", maxEffectRounds)
	}
	t, err := s.standing(target)
	if err != nil {
		return nil, err
	}
	dice := rule.d100
	if s.Config.Ruleset == RulesetD20 {
		dice = rule.d20
	}
	e := Effect{Name: name, Entry: t.Entry, Rounds: rounds, Tick: rule.tick, Dice: dice, Source: source}
	i := slices.IndexFunc(cb.Effects, func(x Effect) bool { return x.Entry == t.Entry && x.Name == name })
	if i >= 0 {
		cb.Effects[i] = e
	} else {
		cb.Effects = append(cb.Effects, e)
	}
	s.setStatuses(t, AddStatus(s.fighter(t).Statuses, name))
	cb.Log = append(cb.Log, fmt.Sprintf("Round %d: %s is %s for %d rounds", cb.Round, t.Name, name, rounds))
	return []Event{EffectEvent(t.Name, name, rounds)}, nil
}

// attackAdvantage sums the advantage effects on an attacker, and those of
// its target (a sleeper is easy to hit, a hidden one hard), clamped to ±1.
func (s *State) attackAdvantage(a, t Combatant) int {
	cb := s.Game.Combat
	adv := 0
	for _, x := range cb.Effects {
		switch {
		case x.Entry == a.Entry:
			adv += effectRules[x.Name].adv
		case x.Entry == t.Entry && x.Name == EffectAsleep:
			adv++
		case x.Entry == t.Entry && x.Name == EffectHidden:
			adv--
		}
	}
	return max(-1, min(1, adv))
}

// tick runs the effects of entry that tick at point. It reports whether
// the bearer loses this turn (stunned).
func (s *State) tick(d *Dice, e Combatant, point string) (skip bool, evs []Event) {
	cb := s.Game.Combat
	kept := cb.Effects[:0:0]
	for _, x := range cb.Effects {
		if x.Entry != e.Entry || x.Tick != point {
			kept = append(kept, x)
			continue
		}
		switch x.Name {
		case EffectPoisoned:
			if s.CanAct(e) {
				r, err := d.RollNotation(e.Name, "poison", x.Dice)
				if err == nil {
					evs = append(evs, diceEvents(d)...)
					_, _, _, dev := s.damage(e, r.Total, true)
					evs = append(evs, dev...)
					cb.Log = append(cb.Log, fmt.Sprintf("Round %d: poison deals %d to %s", cb.Round, r.Total, e.Name))
				}
			}
		case EffectStunned, EffectAsleep:
			skip = true
			evs = append(evs, TurnSkippedEvent(e.Name, x.Name))
			cb.Log = append(cb.Log, fmt.Sprintf("Round %d: %s is %s and loses the turn", cb.Round, e.Name, x.Name))
		}
		x.Rounds--
		if x.Rounds > 0 {
			kept = append(kept, x)
			continue
		}
		if st := s.statusesOf(e); st != nil {
			s.setStatuses(e, RemoveStatus(st, x.Name))
		}
		evs = append(evs, StatusRemovedEvent(e.Name, x.Name))
	}
	cb.Effects = kept
	return skip, evs
}

func (s *State) statusesOf(e Combatant) []string {
	switch e.Kind {
	case KindNPC:
		if n := s.World.NPCs[e.Ref]; n != nil {
			return nonNilStrings(n.Statuses)
		}
	case KindPC:
		if c := s.Character(e.Ref); c != nil {
			return nonNilStrings(c.Statuses)
		}
	}
	return nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// clearEffects removes every effect and its status when a fight ends.
func (s *State) clearEffects() {
	cb := s.Game.Combat
	for _, x := range cb.Effects {
		if e, ok := cb.Entry(x.Entry); ok {
			if st := s.statusesOf(e); st != nil {
				s.setStatuses(e, RemoveStatus(st, x.Name))
			}
		}
	}
	cb.Effects = nil
}
