package engine

import (
	"fmt"
	"slices"
	"sort"
)

// Shops and encounters: the parts of an adventure that price trade and fit
// fights to the party.

// Shop is an NPC's trade: what it stocks at what price, and what it buys
// back at a stated fraction of the price.
type Shop struct {
	// Keeper is the NPC who trades (an NPC id).
	Keeper string `json:"keeper" yaml:"keeper"`
	// Name is the shop's sign, e.g. "Tobin's cart".
	Name string `json:"name" yaml:"name"`
	// Stock is what the keeper sells besides what it carries anyway.
	Stock []StockEntry `json:"stock,omitempty" yaml:"stock"`
	// BuysAt is the percentage of an item's price the keeper pays for it
	// (0..100); 0 means the keeper buys nothing.
	BuysAt int `json:"buys_at" yaml:"buys_at"`
	// Buys lists the item categories the keeper buys (weapon, armour,
	// consumable, or a template's category); empty: anything. A fence
	// buys quest goods and trinkets an honest trader will not touch.
	Buys []string `json:"buys,omitempty" yaml:"buys"`
}

// StockEntry is one line of a shop's stock: Count instances of an item
// template (catalogue or adventure id) at Price gold each (0: the item's
// own price).
type StockEntry struct {
	Item  string `json:"item" yaml:"item"`
	Price int    `json:"price,omitempty" yaml:"price"`
	Count int    `json:"count,omitempty" yaml:"count"`
}

// Encounter is a fight the adventure plans: which foes, where, and the
// party it is written for. A larger or smaller party meets foes scaled to
// it unless Fixed is set.
type Encounter struct {
	ID       string   `json:"id" yaml:"id"`
	Location string   `json:"location" yaml:"location"`
	Foes     []string `json:"foes" yaml:"foes"`
	// PartyPower is the sum of the levels of the party the fight is
	// written for (default 3: three level-1 characters).
	PartyPower int `json:"party_power,omitempty" yaml:"party_power"`
	// Fixed keeps the foes as written whatever the party.
	Fixed bool `json:"fixed,omitempty" yaml:"fixed"`
}

// StockID is the instance id of the i-th item (from 1) a stock entry puts
// in its keeper's hands.
func StockID(keeper, template string, i int) string {
	return fmt.Sprintf("%s-%s-%d", keeper, template, i)
}

// addShops copies the adventure's shops and encounters and gives each
// keeper its stock as item instances (named later, by the catalogue:
// nameStock).
func (w *World) addShops(a *Adventure) {
	for _, sh := range a.Shops {
		sh.Stock = slices.Clone(sh.Stock)
		sh.Buys = slices.Clone(sh.Buys)
		if w.Shops == nil {
			w.Shops = map[string]*Shop{}
		}
		w.Shops[sh.Keeper] = &sh
		for _, st := range sh.Stock {
			for i := 1; i <= max(st.Count, 1); i++ {
				id := StockID(sh.Keeper, st.Item, i)
				w.Items[id] = &Item{ID: id, Template: st.Item, OwnerType: OwnerNPC, OwnerID: sh.Keeper}
			}
		}
	}
	for _, e := range a.Encounters {
		e.Foes = slices.Clone(e.Foes)
		if w.Encounters == nil {
			w.Encounters = map[string]*Encounter{}
		}
		w.Encounters[e.ID] = &e
	}
}

// nameStock names the stock instances addShops made.
func (s *State) nameStock() {
	for _, it := range s.World.Items {
		if it.Name == "" {
			it.Name = s.ItemName(it.Template)
		}
	}
}

// encounterOf returns the planned encounter that lists NPC id, if any.
func (w *World) encounterOf(id string) *Encounter {
	keys := make([]string, 0, len(w.Encounters))
	for k := range w.Encounters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(w.Encounters[k].Foes, id) {
			return w.Encounters[k]
		}
	}
	return nil
}

// PriceFrom is what an item costs when bought from keeper: its shop
// price if the keeper's shop stocks the item's template at a price, else
// the item's own price.
func (s *State) PriceFrom(keeper string, it *Item) int {
	if sh := s.World.Shops[keeper]; sh != nil {
		for _, st := range sh.Stock {
			if st.Item == it.Template && st.Price > 0 {
				return st.Price
			}
		}
	}
	return s.Price(it)
}

// category is an item's category: the catalogue's, else its template's.
func (s *State) category(it *Item) string {
	if s.Catalogue != nil {
		if c := s.Catalogue.Category(it.Template); c != "" {
			return c
		}
	}
	if t, ok := s.World.Templates[it.Template]; ok {
		return t.Category
	}
	return ""
}

// Offer is what keeper pays for an item, and why not when it will not buy.
func (s *State) Offer(keeper *NPC, it *Item) (int, error) {
	sh := s.World.Shops[keeper.ID]
	if sh == nil || sh.BuysAt <= 0 {
		return 0, Errorf(EINVALID, "%s buys nothing; look for a shop that buys.", keeper.Name)
	}
	if cat := s.category(it); len(sh.Buys) > 0 && !slices.Contains(sh.Buys, cat) {
		return 0, Errorf(EINVALID, "%s does not buy %s (only %v).", keeper.Name, it.Name, sh.Buys)
	}
	price := s.Price(it) * sh.BuysAt / 100
	if price <= 0 {
		return 0, Errorf(EINVALID, "%s will not pay anything for %s.", keeper.Name, it.Name)
	}
	return price, nil
}

// SellItem makes the acting character sell an item it carries to an NPC
// here who keeps a shop, at the shop's fraction of the price. The engine
// checks the keeper can pay.
func (s *State) SellItem(actorID, item, to string) (*Item, int, []Event, error) {
	c := s.Character(actorID)
	if c == nil {
		return nil, 0, nil, Errorf(ENOTFOUND, "Unknown character.")
	}
	n, err := s.needNPC(to)
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
	if it.OwnerType != OwnerCharacter || it.OwnerID != c.ID {
		return nil, 0, nil, Errorf(EFORBIDDEN, "%s (%s) is not yours to sell: it is with %s.", it.Name, it.ID, s.ownerName(it))
	}
	price, err := s.Offer(n, it)
	if err != nil {
		return nil, 0, nil, err
	}
	if n.Gold < price {
		return nil, 0, nil, Errorf(EINVALID, "%s would pay %d gold for %s but has only %d.", n.Name, price, it.Name, n.Gold)
	}
	n.Gold -= price
	c.Gold += price
	evs := []Event{ItemRemovedEvent(c.ID, it)}
	it.OwnerType, it.OwnerID = OwnerNPC, n.ID
	for k, v := range s.Game.Wielded {
		if v == it.ID {
			delete(s.Game.Wielded, k)
		}
	}
	return it, price, evs, nil
}

// ShopLine is one item a shop offers.
type ShopLine struct {
	Item  string `json:"item"` // instance id
	Name  string `json:"name"`
	Price int    `json:"price"`
}

// ShopView is a shop as players see it: its stock with prices, what it
// pays back, and its offer for each party member's item it would buy.
type ShopView struct {
	Keeper     string     `json:"keeper"`
	KeeperName string     `json:"keeper_name"`
	Name       string     `json:"name"`
	BuysAt     int        `json:"buys_at"`
	Buys       []string   `json:"buys,omitempty"`
	Stock      []ShopLine `json:"stock"`
	Offers     []Offer    `json:"offers"`
}

// Offer is what a shop would pay a character for one of its items.
type Offer struct {
	Item      string `json:"item"` // instance id
	Name      string `json:"name"`
	Character string `json:"character"`
	Price     int    `json:"price"`
}

// ShopsHere lists the shops whose keepers stand at the party's location,
// by keeper id, with what each has for sale.
func (s *State) ShopsHere() []ShopView {
	out := []ShopView{}
	for _, n := range s.World.NPCsAt(s.Game.Location) {
		sh := s.World.Shops[n.ID]
		if sh == nil || !n.Alive() || n.Hostile {
			continue
		}
		v := ShopView{Keeper: n.ID, KeeperName: n.Name, Name: sh.Name, BuysAt: sh.BuysAt, Buys: slices.Clone(sh.Buys), Stock: []ShopLine{}, Offers: []Offer{}}
		for _, it := range s.World.ItemsOwned(OwnerNPC, n.ID) {
			if p := s.PriceFrom(n.ID, it); p > 0 {
				v.Stock = append(v.Stock, ShopLine{Item: it.ID, Name: it.Name, Price: p})
			}
		}
		for _, c := range s.Party {
			for _, it := range s.World.ItemsOwned(OwnerCharacter, c.ID) {
				if p, err := s.Offer(n, it); err == nil {
					v.Offers = append(v.Offers, Offer{Item: it.ID, Name: it.Name, Character: c.ID, Price: p})
				}
			}
		}
		out = append(out, v)
	}
	return out
}
