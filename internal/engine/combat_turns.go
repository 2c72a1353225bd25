package engine

// The turn order of a fight: who may act, when a fight ends, whose turn is next.

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
func (s *State) CheckEnd() Outcome {
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
		s.rechargeTurn(e) // a beat is everyone's turn
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
	s.rechargeTurn(e)
	st := s.statusesOf(e)
	if !HasStatus(st, StatusDefending) {
		return nil
	}
	s.setStatuses(e, RemoveStatus(st, StatusDefending))
	return []Event{StatusRemovedEvent(e.Name, StatusDefending)}
}
