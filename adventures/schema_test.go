package adventures

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestSchemaAcceptsBuiltIns checks every built-in adventure against the
// served JSON Schema, with a validator of the keywords the generator
// writes (type, properties, additionalProperties, required, items, $ref,
// maxLength, maxItems, minimum, maximum).
func TestSchemaAcceptsBuiltIns(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal(Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(lib.IDs()) < 3 {
		t.Errorf("want three built-in adventures, have %v", lib.IDs())
	}
	for _, id := range lib.IDs() {
		src, _ := lib.Source(id)
		var doc any
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		if errs := validateSchema(schema, schema, doc, ""); len(errs) > 0 {
			t.Errorf("%s: %s", id, strings.Join(errs, "\n"))
		}
	}
	// The validator itself must catch what the schema forbids.
	bad := map[string]any{"id": "x", "name": strings.Repeat("n", 81), "intro": "i", "start": "s", "locations": []any{}, "extra": 1}
	if errs := validateSchema(schema, schema, bad, ""); len(errs) != 2 {
		t.Errorf("a long name and an unknown field: got %v", errs)
	}
}

func validateSchema(root, s map[string]any, v any, path string) []string {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		return validateSchema(root, root["$defs"].(map[string]any)[name].(map[string]any), v, path)
	}
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(f, a...)) }
	switch s["type"] {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			bad("want an object, got %T", v)
			return errs
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := m[r.(string)]; !ok {
				bad("missing %s", r)
			}
		}
		for k, x := range m {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if ap, ok := s["additionalProperties"].(map[string]any); ok {
					errs = append(errs, validateSchema(root, ap, x, path+"."+k)...)
				} else if s["additionalProperties"] == false {
					bad("unknown field %s", k)
				}
				continue
			}
			errs = append(errs, validateSchema(root, ps, x, path+"."+k)...)
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			bad("want an array, got %T", v)
			return errs
		}
		if mx, ok := s["maxItems"].(float64); ok && float64(len(l)) > mx {
			bad("%d items over %v", len(l), mx)
		}
		if it, ok := s["items"].(map[string]any); ok {
			for i, x := range l {
				errs = append(errs, validateSchema(root, it, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			bad("want a string, got %T", v)
			return errs
		}
		if mx, ok := s["maxLength"].(float64); ok && float64(len([]rune(str))) > mx {
			bad("%d characters over %v", len([]rune(str)), mx)
		}
	case "integer":
		n, ok := v.(int)
		if !ok {
			bad("want an integer, got %T", v)
			return errs
		}
		if mn, ok := s["minimum"].(float64); ok && float64(n) < mn {
			bad("%d under %v", n, mn)
		}
		if mx, ok := s["maximum"].(float64); ok && float64(n) > mx {
			bad("%d over %v", n, mx)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			bad("want a boolean, got %T", v)
		}
	}
	return errs
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
