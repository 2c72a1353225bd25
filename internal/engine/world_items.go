package engine

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Items: giving, trading, creating and equipping them.

// needInstance resolves an item instance id, explaining template/instance
// confusion.
func (s *State) needInstance(ref string) (*Item, error) {
	if it, ok := s.World.Items[ref]; ok {
		return it, nil
	}
	if s.templateExists(ref) {
		return nil, Errorf(EINVALID, "%q is an item template, not an item: use the instance id from an inventory or get_items_at_location.", ref)
	}
	return nil, Errorf(ENOTFOUND, "No item with instance id %q.", ref)
}

func (s *State) templateExists(id string) bool {
	if s.Catalogue != nil && s.Catalogue.Category(id) != "" {
		return true
	}
	_, ok := s.World.Templates[id]
	return ok
}

func (s *State) ownerName(it *Item) string {
	switch it.OwnerType {
	case OwnerCharacter, OwnerNPC:
		return s.entityName(it.OwnerID)
	case OwnerLocation:
		if l := s.World.Locations[it.OwnerID]; l != nil {
			return l.Name
		}
	}
	return it.OwnerID
}

// ResolveName names an item's owner.
func (s *State) ResolveName(it *Item) string { return s.ownerName(it) }

// DropItem puts an item of the acting character down where the party is.
func (s *State) DropItem(actorID, item string) (*Item, []Event, error) {
	it, err := s.needInstance(item)
	if err != nil {
		return nil, nil, err
	}
	if it.OwnerType != OwnerCharacter || it.OwnerID != actorID {
		return nil, nil, Errorf(EFORBIDDEN, "%s (%s) is not yours to drop: it is with %s.", it.Name, it.ID, s.ownerName(it))
	}
	it.OwnerType, it.OwnerID = OwnerLocation, s.Game.Location
	return it, []Event{ItemRemovedEvent(actorID, it)}, nil
}

// GiveItem hands an item of the acting character to a party member or an
// NPC at the party's location.
func (s *State) GiveItem(actorID, item, to string) (*Item, []Event, error) {
	it, err := s.needInstance(item)
	if err != nil {
		return nil, nil, err
	}
	if it.OwnerType != OwnerCharacter || it.OwnerID != actorID {
		return nil, nil, Errorf(EFORBIDDEN, "%s (%s) is not yours to give: it is with %s.", it.Name, it.ID, s.ownerName(it))
	}
	evs := []Event{ItemRemovedEvent(actorID, it)}
	if c := s.FindCharacter(to); c != nil {
		if c.ID == actorID {
			return nil, nil, Errorf(EINVALID, "You already have %s.", it.Name)
		}
		it.OwnerType, it.OwnerID = OwnerCharacter, c.ID
		return it, append(evs, ItemAddedEvent(c.ID, it)), nil
	}
	n, err := s.needNPC(to)
	if err != nil {
		return nil, nil, err
	}
	if n.Location != s.Game.Location || !n.Alive() {
		return nil, nil, Errorf(EINVALID, "%s is not here to take it.", n.Name)
	}
	it.OwnerType, it.OwnerID = OwnerNPC, n.ID
	return it, evs, nil
}

// TransferItem moves an item between owners as the DM narrates (loot, an
// NPC's gift, an NPC picking something up). It never takes an item from a
// party member other than the acting one: that player must give it.
func (s *State) TransferItem(actorID, item, ownerType, ownerRef string) (*Item, []Event, error) {
	it, err := s.needInstance(item)
	if err != nil {
		return nil, nil, err
	}
	if it.OwnerType == OwnerCharacter && it.OwnerID != actorID {
		return nil, nil, Errorf(EFORBIDDEN, "%s belongs to %s; only that player can give it away.", it.Name, s.ownerName(it))
	}
	if it.OwnerType == OwnerNPC {
		if n := s.World.NPCs[it.OwnerID]; n != nil && n.Location != s.Game.Location {
			return nil, nil, Errorf(EINVALID, "%s is with %s, who is not here.", it.Name, n.Name)
		}
	}
	if it.OwnerType == OwnerLocation && it.OwnerID != s.Game.Location {
		return nil, nil, Errorf(EINVALID, "%s lies elsewhere (%s).", it.Name, s.ownerName(it))
	}
	var evs []Event
	if it.OwnerType == OwnerCharacter {
		evs = append(evs, ItemRemovedEvent(it.OwnerID, it))
	}
	switch ownerType {
	case OwnerCharacter:
		c, err := s.needCharacter(ownerRef)
		if err != nil {
			return nil, nil, err
		}
		it.OwnerType, it.OwnerID = OwnerCharacter, c.ID
		evs = append(evs, ItemAddedEvent(c.ID, it))
	case OwnerNPC:
		n, err := s.needNPC(ownerRef)
		if err != nil {
			return nil, nil, err
		}
		it.OwnerType, it.OwnerID = OwnerNPC, n.ID
	case OwnerLocation:
		l := s.FindLocation(ownerRef)
		if l == nil {
			return nil, nil, Errorf(ENOTFOUND, "No location %q.", ownerRef)
		}
		it.OwnerType, it.OwnerID = OwnerLocation, l.ID
	default:
		return nil, nil, Errorf(EINVALID, "new_owner_type must be character, npc or location.")
	}
	return it, evs, nil
}

// Price is what an item costs: its catalogue price or template value.
func (s *State) Price(it *Item) int {
	if p, ok := s.Catalogue.Price(it.Template); ok {
		return p
	}
	if t, ok := s.World.Templates[it.Template]; ok {
		return t.Value
	}
	return 0
}

// BuyItem makes the acting character buy an item an NPC at the party's
// location carries, at its shop price or else its catalogue price.
func (s *State) BuyItem(actorID, item, from string) (*Item, int, []Event, error) {
	c := s.Character(actorID)
	if c == nil {
		return nil, 0, nil, Errorf(ENOTFOUND, "Unknown character.")
	}
	n, err := s.needNPC(from)
	if err != nil {
		return nil, 0, nil, err
	}
	if n.Location != s.Game.Location || !n.Alive() {
		return nil, 0, nil, Errorf(EINVALID, "%s is not here to trade.", n.Name)
	}
	it, err := s.needInstance(item)
	if err != nil {
		return nil, 0, nil, err
	}
	if it.OwnerType != OwnerNPC || it.OwnerID != n.ID {
		return nil, 0, nil, Errorf(EINVALID, "%s does not have %s (%s) to sell; ask what they carry with get_npc_inventory.", n.Name, it.Name, it.ID)
	}
	price := s.PriceFrom(n.ID, it)
	if c.Gold < price {
		return nil, 0, nil, Errorf(EINVALID, "%s costs %d gold; %s has %d.", it.Name, price, c.Name, c.Gold)
	}
	c.Gold -= price
	n.Gold += price
	it.OwnerType, it.OwnerID = OwnerCharacter, c.ID
	return it, price, []Event{ItemAddedEvent(c.ID, it)}, nil
}

var traitRE = regexp.MustCompile(`^[\pL\pN][\pL\pN '+:,.%-]{0,59}$`)

// CreateItem creates a new item instance of a template (catalogue or world)
// for an owner, with optional buffs and flaws (at most 3 each, short text).
func (s *State) CreateItem(id, template, name, ownerType, ownerID string, buffs, flaws []string) (*Item, []Event, error) {
	if !s.templateExists(template) {
		if it, ok := s.World.Items[template]; ok {
			return nil, nil, Errorf(EINVALID, "%q is an item (an instance of %s), not a template: to move it, use transfer_item.", template, it.Template)
		}
		var ids []string
		for id := range s.World.Templates {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		return nil, nil, Errorf(ENOTFOUND, "No item template %q; search with list_item_templates or create one with create_item_template. Adventure templates: %s.", template, strings.Join(ids, ", "))
	}
	for _, list := range [][]string{buffs, flaws} {
		if len(list) > MaxTraits {
			return nil, nil, Errorf(EINVALID, "An item has at most %d buffs and %d flaws.", MaxTraits, MaxTraits)
		}
		for _, t := range list {
			if !traitRE.MatchString(t) {
				return nil, nil, Errorf(EINVALID, "Buffs and flaws are short phrases (1-60 letters, digits, punctuation): %q.", t)
			}
		}
	}
	if name == "" {
		name = s.ItemName(template)
	}
	if len([]rune(name)) > 60 {
		return nil, nil, Errorf(EINVALID, "An item name has at most 60 characters.")
	}
	it := &Item{ID: id, Template: template, Name: name, OwnerType: ownerType, OwnerID: ownerID, Buffs: slices.Clone(buffs), Flaws: slices.Clone(flaws)}
	s.World.Items[id] = it
	var evs []Event
	if ownerType == OwnerCharacter {
		evs = append(evs, ItemAddedEvent(ownerID, it))
	}
	return it, evs, nil
}

// Equip makes character c wield an item it carries whose template is a
// catalogue weapon or armour: the rules then use that weapon or armour,
// and the sheet names the item (an heirloom keeps its name, buffs and
// flaws). It returns the slot ("weapon" or "armour").
func (s *State) Equip(characterID, item string) (string, *Item, []Event, error) {
	c := s.Character(characterID)
	if c == nil {
		return "", nil, nil, Errorf(ENOTFOUND, "No character %q.", characterID)
	}
	owned := s.World.ItemsOwned(OwnerCharacter, c.ID)
	i := slices.IndexFunc(owned, func(it *Item) bool { return it.ID == item || equalFoldTrim(it.Name, item) })
	if i < 0 {
		return "", nil, nil, Errorf(ENOTFOUND, "%s carries no %q.", c.Name, item)
	}
	it := owned[i]
	slot := ""
	for _, w := range s.Catalogue.Weapons {
		if w.ID == it.Template {
			slot, c.Weapon = "weapon", w.ID
		}
	}
	for _, a := range s.Catalogue.Armours {
		if a.ID == it.Template {
			slot, c.Armour = "armour", a.ID
		}
	}
	if slot == "" {
		return "", nil, nil, Errorf(EINVALID, "%s is neither a weapon nor armour.", it.Name)
	}
	if s.Game.Wielded == nil {
		s.Game.Wielded = map[string]string{}
	}
	s.Game.Wielded[c.ID+":"+slot] = it.ID
	return slot, it, []Event{EquippedEvent(c.ID, it, slot)}, nil
}

// WieldedItem is the item instance character c has equipped in slot, if
// it still carries it.
func (s *State) WieldedItem(c *Character, slot string) *Item {
	it := s.World.Items[s.Game.Wielded[c.ID+":"+slot]]
	if it == nil || it.OwnerType != OwnerCharacter || it.OwnerID != c.ID {
		return nil
	}
	return it
}
