package engine

import (
	"fmt"
	"strings"
)

func equalFoldTrim(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// byIDOrName looks ref up as a key of m, then as a case-insensitive name.
func byIDOrName[T any](m map[string]*T, ref string, name func(*T) string) *T {
	if v, ok := m[ref]; ok {
		return v
	}
	for _, v := range m {
		if equalFoldTrim(name(v), ref) {
			return v
		}
	}
	return nil
}

// FindLocation resolves a location by id or name.
func (s *State) FindLocation(ref string) *Location {
	return byIDOrName(s.World.Locations, ref, func(l *Location) string { return l.Name })
}

// ExitTo finds the exit of the party's location that leads to ref (an exit
// name, a location id or a location name).
func (s *State) ExitTo(ref string) (Exit, bool) {
	here := s.World.Locations[s.Game.Location]
	if here == nil {
		return Exit{}, false
	}
	for _, e := range here.Exits {
		if e.To == ref || equalFoldTrim(e.Name, ref) {
			return e, true
		}
		if l := s.World.Locations[e.To]; l != nil && equalFoldTrim(l.Name, ref) {
			return e, true
		}
	}
	return Exit{}, false
}

func (s *State) exitNames() string {
	here := s.World.Locations[s.Game.Location]
	if here == nil || len(here.Exits) == 0 {
		return "none"
	}
	var names []string
	for _, e := range here.Exits {
		names = append(names, fmt.Sprintf("%s (to %s)", e.Name, e.To))
	}
	return strings.Join(names, ", ")
}

// MoveParty takes the whole party through an exit of its location (the
// party travels together). Only in narrative mode. A trap on the exit
// springs on leaderID (the character who chose the way; someone else if
// they are down): the engine rolls the check and the damage, returned as
// the *TrapSprung, nil if the way was clear.
func (s *State) MoveParty(d *Dice, leaderID, to string) (*Location, *TrapSprung, []Event, error) {
	if s.Game.Mode != ModeNarrative {
		return nil, nil, nil, Errorf(EINVALID, "The party cannot travel during a fight; flee first.")
	}
	e, ok := s.ExitTo(to)
	if !ok {
		return nil, nil, nil, Errorf(EINVALID, "There is no way to %q from here; exits: %s.", to, s.exitNames())
	}
	if e.Key != "" && !s.partyCarries(e.Key) {
		return nil, nil, nil, Errorf(EINVALID, "The way through %s is locked: it opens with %s, and nobody in the party carries one.", e.Name, s.ItemName(e.Key))
	}
	var sprung *TrapSprung
	var trapEvs []Event
	if e.Trap != nil {
		// Rolled before the move so that a trap the adventure got wrong
		// leaves the party where it was.
		var err error
		if sprung, trapEvs, err = s.springTrap(d, *e.Trap, leaderID); err != nil {
			return nil, nil, nil, err
		}
	}
	s.moveParty(e.To)
	l := s.World.Locations[e.To]
	return l, sprung, append([]Event{PartyMovedEvent(l)}, trapEvs...), nil
}

// PickUp moves an item lying at the party's location into character's
// inventory. item is an instance id or a name.
func (s *State) PickUp(characterID, item string) (*Item, []Event, error) {
	c := s.Character(characterID)
	if c == nil {
		return nil, nil, Errorf(ENOTFOUND, "Unknown character %q.", characterID)
	}
	if !c.Conscious() {
		return nil, nil, Errorf(EINVALID, "%s is unconscious.", c.Name)
	}
	here := s.World.ItemsOwned(OwnerLocation, s.Game.Location)
	var it *Item
	for _, x := range here {
		if x.ID == item || equalFoldTrim(x.Name, item) {
			it = x
			break
		}
	}
	if it == nil {
		if x, ok := s.World.Items[item]; ok && x.OwnerType != OwnerLocation {
			return nil, nil, Errorf(EINVALID, "%s (%s) is not lying here: it belongs to someone.", x.Name, x.ID)
		}
		var names []string
		for _, x := range here {
			names = append(names, fmt.Sprintf("%s (%s)", x.Name, x.ID))
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		return nil, nil, Errorf(ENOTFOUND, "There is no %q here; items here: %s.", item, strings.Join(names, ", "))
	}
	it.OwnerType, it.OwnerID = OwnerCharacter, c.ID
	return it, []Event{ItemAddedEvent(c.ID, it)}, nil
}

// Inventory returns a character's items.
func (s *State) Inventory(characterID string) []*Item {
	return s.World.ItemsOwned(OwnerCharacter, characterID)
}

// partyCarries reports whether a party member carries an item of
// template tpl.
func (s *State) partyCarries(tpl string) bool {
	for _, it := range s.World.Items {
		if it.OwnerType == OwnerCharacter && it.Template == tpl && s.Character(it.OwnerID) != nil {
			return true
		}
	}
	return false
}
