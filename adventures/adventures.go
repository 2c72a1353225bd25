// Package adventures is the adventure format (docs/adventures.md): [Parse]
// reads one and reports every problem with its line, path and how to fix
// it; [Schema] is its JSON Schema, generated from the engine's types. It
// holds the built-in adventures and the equipment catalogue as embedded
// YAML ([Load] parses and checks them once at start-up), and the [Shelf]
// of built-in and community adventures that the hub and the web serve.
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

//go:embed starter/rat-cellar.yaml
var starter []byte

// Starter is the small complete adventure a new one starts from in the
// editor (the example of docs/adventures.md). The caller must not modify
// it.
func Starter() []byte { return starter }

// Library is the loaded catalogue and adventures. It is immutable and safe
// for concurrent use.
type Library struct {
	Catalogue  *engine.Catalogue
	adventures map[string]*engine.Adventure
	sources    map[string][]byte
}

// Default is the adventure new tables get when they name none.
const Default = "greyhollow"

// Load parses the embedded catalogue and adventures and checks that every
// reference in them resolves.
func Load() (*Library, error) { return LoadFS(files) }

// LoadFS loads a library from fsys: catalogue.yaml and one YAML file per
// adventure.
func LoadFS(fsys fs.FS) (*Library, error) {
	lib := &Library{Catalogue: &engine.Catalogue{}, adventures: map[string]*engine.Adventure{}, sources: map[string][]byte{}}
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
		// The built-in adventures pass the same validation as uploads.
		a, problems := Parse(b, lib.Catalogue)
		if len(problems) > 0 {
			return nil, fmt.Errorf("%s: %w", name, &ProblemsError{problems})
		}
		lib.adventures[a.ID] = a
		lib.sources[a.ID] = b
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

// Source returns the YAML of a built-in adventure. The caller must not
// modify it.
func (l *Library) Source(id string) ([]byte, bool) {
	b, ok := l.sources[id]
	return b, ok
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
