// Package adventures holds Tavern's built-in adventures and the equipment
// catalogue as embedded YAML, and loads them into engine types. Start with
// [Load], which parses and checks everything once at start-up.
package adventures

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"tavern/internal/engine"
)

//go:embed *.yaml
var files embed.FS

// Library is the loaded catalogue and adventures. It is immutable and safe
// for concurrent use.
type Library struct {
	Catalogue  *engine.Catalogue
	adventures map[string]*engine.Adventure
}

// Default is the adventure new tables get when they name none.
const Default = "greyhollow"

// Load parses the embedded catalogue and adventures and checks that every
// reference in them resolves.
func Load() (*Library, error) { return LoadFS(files) }

// LoadFS loads a library from fsys: catalogue.yaml and one YAML file per
// adventure.
func LoadFS(fsys fs.FS) (*Library, error) {
	lib := &Library{Catalogue: &engine.Catalogue{}, adventures: map[string]*engine.Adventure{}}
	b, err := fs.ReadFile(fsys, "catalogue.yaml")
	if err != nil {
		return nil, fmt.Errorf("read catalogue: %w", err)
	}
	if err := strictUnmarshal(b, lib.Catalogue); err != nil {
		return nil, fmt.Errorf("parse catalogue.yaml: %w", err)
	}
	if len(lib.Catalogue.Classes) == 0 {
		return nil, fmt.Errorf("catalogue.yaml: no classes")
	}
	if err := checkCatalogue(lib.Catalogue); err != nil {
		return nil, fmt.Errorf("catalogue.yaml: %w", err)
	}
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == "catalogue.yaml" {
			continue
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var a engine.Adventure
		if err := strictUnmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if err := check(&a, lib.Catalogue); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		lib.adventures[a.ID] = &a
	}
	return lib, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// Get returns the adventure with id. The caller must not modify it.
func (l *Library) Get(id string) (*engine.Adventure, bool) {
	a, ok := l.adventures[id]
	return a, ok
}

// IDs lists the adventures, sorted.
func (l *Library) IDs() []string {
	ids := make([]string, 0, len(l.adventures))
	for id := range l.adventures {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// checkCatalogue checks that ids are unique across the catalogue, prices
// are not negative and dice notations parse, so a bad entry fails at start
// rather than at the first roll or sale.
func checkCatalogue(cat *engine.Catalogue) error {
	ids := map[string]bool{}
	entry := func(id, name string, price int) error {
		switch {
		case id == "" || name == "":
			return fmt.Errorf("entry %q needs an id and a name", id)
		case ids[id]:
			return fmt.Errorf("duplicate id %q", id)
		case price < 0:
			return fmt.Errorf("%q: negative price %d", id, price)
		}
		ids[id] = true
		return nil
	}
	dice := func(id, notation string) error {
		if _, _, _, err := engine.ParseNotation(notation); err != nil {
			return fmt.Errorf("%q: dice %q: %w", id, notation, err)
		}
		return nil
	}
	for _, w := range cat.Weapons {
		if err := entry(w.ID, w.Name, w.Price); err != nil {
			return err
		}
		if err := dice(w.ID, w.Dice); err != nil {
			return err
		}
	}
	for _, a := range cat.Armours {
		if err := entry(a.ID, a.Name, a.Price); err != nil {
			return err
		}
	}
	for _, c := range cat.Consumables {
		if err := entry(c.ID, c.Name, c.Price); err != nil {
			return err
		}
		if err := dice(c.ID, c.Heal); err != nil {
			return err
		}
		if err := dice(c.ID, c.HealD20); err != nil {
			return err
		}
	}
	return nil
}

func check(a *engine.Adventure, cat *engine.Catalogue) error {
	if a.ID == "" || a.Name == "" {
		return fmt.Errorf("adventure needs an id and a name")
	}
	locs := map[string]bool{}
	for _, l := range a.Locations {
		if locs[l.ID] {
			return fmt.Errorf("duplicate location %q", l.ID)
		}
		locs[l.ID] = true
	}
	if !locs[a.Start] {
		return fmt.Errorf("start location %q does not exist", a.Start)
	}
	for _, l := range a.Locations {
		for _, e := range l.Exits {
			if !locs[e.To] {
				return fmt.Errorf("location %q: exit to unknown location %q", l.ID, e.To)
			}
		}
	}
	npcs := map[string]bool{}
	for _, n := range a.NPCs {
		if npcs[n.ID] {
			return fmt.Errorf("duplicate NPC %q", n.ID)
		}
		npcs[n.ID] = true
		if !locs[n.Location] {
			return fmt.Errorf("NPC %q: unknown location %q", n.ID, n.Location)
		}
		if n.HP <= 0 {
			return fmt.Errorf("NPC %q: hp must be positive", n.ID)
		}
		if n.Weapon != "" && cat.Category(n.Weapon) != "weapon" {
			return fmt.Errorf("NPC %q: weapon %q is not in the catalogue", n.ID, n.Weapon)
		}
		if n.Armour != "" && cat.Category(n.Armour) != "armour" {
			return fmt.Errorf("NPC %q: armour %q is not in the catalogue", n.ID, n.Armour)
		}
	}
	tpls := map[string]bool{}
	for _, t := range a.Templates {
		if tpls[t.ID] || cat.Category(t.ID) != "" {
			return fmt.Errorf("item template %q is defined twice (in the adventure or the catalogue)", t.ID)
		}
		if t.Value < 0 {
			return fmt.Errorf("item template %q: negative value %d", t.ID, t.Value)
		}
		tpls[t.ID] = true
	}
	friendly := map[string]bool{}
	for _, n := range a.NPCs {
		friendly[n.ID] = !n.Hostile
	}
	prices := engine.NewState(engine.Config{}, a, cat, 0) // the engine's Price
	for _, it := range a.Items {
		if !tpls[it.Template] && cat.Category(it.Template) == "" {
			return fmt.Errorf("item %q: unknown template %q", it.ID, it.Template)
		}
		// What a friendly NPC carries is stock for buy_item: one without
		// a price would be a gift the engine cannot tell from a sale.
		if it.OwnerType == engine.OwnerNPC && friendly[it.OwnerID] && prices.Price(&it) <= 0 {
			return fmt.Errorf("item %q: %s sells it but it has no price", it.ID, it.OwnerID)
		}
		ok := false
		switch it.OwnerType {
		case engine.OwnerLocation:
			ok = locs[it.OwnerID]
		case engine.OwnerNPC:
			ok = npcs[it.OwnerID]
		}
		if !ok {
			return fmt.Errorf("item %q: unknown owner %s %q", it.ID, it.OwnerType, it.OwnerID)
		}
	}
	for _, q := range a.Quests {
		if !npcs[q.Giver] {
			return fmt.Errorf("quest %q: unknown giver %q", q.ID, q.Giver)
		}
	}
	return nil
}
