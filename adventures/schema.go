package adventures

import (
	"encoding/json"
	"sync"

	"github.com/invopop/jsonschema"

	"tavern/internal/engine"
)

// schemaLimits are the text limits by field name, the ones check.go
// applies, written into the schema so an editor can check as the server
// does.
var schemaLimits = map[string]uint64{
	"id": maxID, "keeper": maxID, "to": maxID, "start": maxID, "location": maxID, "giver": maxID,
	"template": maxID, "item": maxID, "requires": maxID, "owner_id": maxID,
	"kind": maxID, "category": maxID, "behavior": maxID,
	"name": maxName, "faction": maxName,
	"summary": maxShort, "personality": maxShort, "tactics": maxShort, "secret": maxShort,
	"intro": maxLong, "description": maxLong,
}

// schemaRequired are the fields each definition cannot do without.
var schemaRequired = map[string][]string{
	"Adventure":    {"id", "name", "intro", "start", "locations"},
	"Location":     {"id", "name"},
	"Exit":         {"to", "name"},
	"NPC":          {"id", "name", "location", "hp"},
	"ItemTemplate": {"id", "name"},
	"Item":         {"id", "template", "owner_type", "owner_id"},
	"Shop":         {"keeper"},
	"StockEntry":   {"item"},
	"Quest":        {"id", "name", "giver"},
	"Encounter":    {"id", "location", "foes"},
}

var schemaOnce = sync.OnceValue(func() []byte {
	r := &jsonschema.Reflector{FieldNameTag: "yaml", RequiredFromJSONSchemaTags: true}
	s := r.Reflect(&engine.Adventure{})
	s.ID = "/api/adventures/schema.json"
	s.Title = "Tavern adventure"
	s.Description = "An adventure for Tavern, written in YAML. See docs/adventures.md."
	for name, def := range s.Definitions {
		def.Required = schemaRequired[name]
		if def.Properties == nil {
			continue
		}
		for p := def.Properties.Oldest(); p != nil; p = p.Next() {
			if n, ok := schemaLimits[p.Key]; ok && p.Value.Type == "string" {
				p.Value.MaxLength = &n
			}
		}
		switch name {
		case "Adventure":
			setMaxItems(def, "locations", MaxLocations)
			setMaxItems(def, "npcs", MaxNPCs)
			setMaxItems(def, "items", MaxItems)
			setMaxItems(def, "item_templates", MaxItems)
		case "NPC":
			if l, ok := def.Properties.Get("lines"); ok && l.AdditionalProperties != nil {
				n := uint64(maxShort)
				l.AdditionalProperties.MaxLength = &n
			}
			if d, ok := def.Properties.Get("disposition"); ok {
				d.Minimum, d.Maximum = json.Number("-100"), json.Number("100")
			}
		case "Shop":
			if d, ok := def.Properties.Get("buys_at"); ok {
				d.Minimum, d.Maximum = json.Number("0"), json.Number("100")
			}
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err) // a schema of plain structs always encodes
	}
	return b
})

func setMaxItems(def *jsonschema.Schema, prop string, n uint64) {
	if p, ok := def.Properties.Get(prop); ok {
		p.MaxItems = &n
	}
}

// Schema is the JSON Schema of the adventure format, generated from the
// engine's types. The caller must not modify it.
func Schema() []byte { return schemaOnce() }
