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
		})
	}
}
