package adventures

import (
	"testing"
	"testing/fstest"

	"tavern/internal/engine"
)

func TestLoadBuiltIn(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	a, ok := lib.Get(Default)
	if !ok {
		t.Fatalf("default adventure %q missing; have %v", Default, lib.IDs())
	}
	if len(a.Locations) < 4 {
		t.Errorf("want a start and at least three more locations, got %d", len(a.Locations))
	}
	var merchant, giver, hostile int
	for _, n := range a.NPCs {
		switch {
		case n.Kind == "merchant" && !n.Hostile:
			merchant++
		case n.Hostile:
			hostile++
		}
	}
	for _, q := range a.Quests {
		if q.Giver != "" {
			giver++
		}
	}
	if merchant == 0 || giver == 0 || hostile < 2 {
		t.Errorf("merchant=%d quest givers=%d hostiles=%d", merchant, giver, hostile)
	}
	if h, ok := lib.Catalogue.Consumable("healing-potion"); !ok || h.Heal == "" {
		t.Errorf("catalogue lacks a healing potion")
	}
	w := engine.NewWorld(a)
	// The band of hostile creatures must be one move from the start.
	near := false
	for _, e := range w.Locations[a.Start].Exits {
		for _, n := range w.NPCsAt(e.To) {
			near = near || n.Hostile
		}
	}
	if !near {
		t.Errorf("no hostile NPC within one move of the start")
	}
}

func TestLoadRejectsBrokenReferences(t *testing.T) {
	cat := "classes: [{id: w, name: W, hp: 10, weapon: x}]\n"
	cases := map[string]string{
		"unknown exit":  "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S, exits: [{to: nowhere, name: n}]}]\n",
		"unknown start": "id: a\nname: A\nstart: nope\nlocations: [{id: s, name: S}]\n",
		"npc location":  "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\nnpcs: [{id: n, name: N, location: x, hp: 3}]\n",
		"item owner":    "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\nitem_templates: [{id: t, name: T}]\nitems: [{id: i, template: t, name: I, owner_type: npc, owner_id: ghost}]\n",
		"unknown field": "id: a\nname: A\nstart: s\nlocatoins: []\n",
		"free stock": "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\nnpcs: [{id: n, name: N, location: s, hp: 3}]\n" +
			"item_templates: [{id: t, name: T, value: 0}]\nitems: [{id: i, template: t, name: I, owner_type: npc, owner_id: n}]\n",
		"negative value": "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\nitem_templates: [{id: t, name: T, value: -1}]\n",
		"template twice": "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\nitem_templates: [{id: t, name: T}, {id: t, name: U}]\n",
	}
	for name, adv := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{
				"catalogue.yaml": {Data: []byte(cat)},
				"a.yaml":         {Data: []byte(adv)},
			})
			if err == nil {
				t.Fatal("want an error")
			}
			t.Log(err)
		})
	}
}

// A catalogue entry that would fail at the first roll or sale fails the
// load instead.
func TestLoadRejectsBrokenCatalogue(t *testing.T) {
	adv := "id: a\nname: A\nstart: s\nlocations: [{id: s, name: S}]\n"
	const classes = "classes: [{id: w, name: W, hp: 10}]\n"
	for name, cat := range map[string]string{
		"duplicate id":   "weapons: [{id: x, name: X, dice: 1d4}]\narmour: [{id: x, name: X2}]\n",
		"negative price": "weapons: [{id: x, name: X, dice: 1d4, price: -2}]\n",
		"weapon dice":    "weapons: [{id: x, name: X, dice: d4}]\n",
		"heal dice":      "consumables: [{id: x, name: X, heal: 1d4, heal_d20: lots}]\n",
		"no name":        "consumables: [{id: x, heal: 1d4, heal_d20: 1d2}]\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadFS(fstest.MapFS{
				"catalogue.yaml": {Data: []byte(cat + classes)},
				"a.yaml":         {Data: []byte(adv)},
			})
			if err == nil {
				t.Fatal("want an error")
			}
			t.Log(err)
		})
	}
}

// The item templates the game master's design seeds (an iron sword, a
// healing potion, bread, a torch, a traveller's cape) exist with a price
// a starting character can pay, and the default adventure sells each.
func TestSeededTemplatesAreSold(t *testing.T) {
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := lib.Get(Default)
	st := engine.NewState(engine.Config{}, a, lib.Catalogue, 1)
	for _, tc := range []struct {
		template, category string
		minPrice, maxPrice int
	}{
		{"iron-sword", "weapon", 5, 25},
		{"healing-potion", "consumable", 10, 50},
		{"bread", "consumable", 1, 2},
		{"torch", "gear", 1, 2},
		{"travellers-cape", "clothing", 1, 10},
	} {
		t.Run(tc.template, func(t *testing.T) {
			cat := lib.Catalogue.Category(tc.template)
			if tpl, ok := st.World.Templates[tc.template]; ok {
				cat = tpl.Category
			}
			if cat != tc.category {
				t.Errorf("category %q, want %q", cat, tc.category)
			}
			sold := false
			for _, it := range st.World.Items {
				if it.Template != tc.template || it.OwnerType != engine.OwnerNPC {
					continue
				}
				n := st.World.NPCs[it.OwnerID]
				if n.Hostile {
					continue
				}
				sold = true
				if p := st.Price(it); p < tc.minPrice || p > tc.maxPrice {
					t.Errorf("%s sells %s at %d gold, want %d to %d", n.Name, it.Name, p, tc.minPrice, tc.maxPrice)
				}
			}
			if !sold {
				t.Errorf("nobody friendly in %s sells %s", a.Name, tc.template)
			}
		})
	}
	if c, ok := lib.Catalogue.Consumable("bread"); !ok || c.Heal == "" {
		t.Error("bread heals nobody")
	}
}
