package agent

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"tavern/internal/engine"
)

// Tool is one function a model may call. Run validates its arguments
// against the state and returns a result text for the model, or an error
// whose message tells the model what to do instead.
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Output tools end the turn.
	Output bool
	Run    func(tc *ToolContext, args json.RawMessage) (string, error)
}

// Spec returns the tool's schema for the model.
func (t *Tool) Spec() ToolSpec {
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Registry is an ordered set of tools. Immutable once built; safe for
// concurrent use.
type Registry struct {
	tools []*Tool
	by    map[string]*Tool
}

// NewRegistry builds a registry from tools, in order.
func NewRegistry(tools ...*Tool) *Registry {
	r := &Registry{by: map[string]*Tool{}}
	for _, t := range tools {
		r.tools = append(r.tools, t)
		r.by[t.Name] = t
	}
	return r
}

// Get returns the named tool.
func (r *Registry) Get(name string) (*Tool, bool) {
	t, ok := r.by[name]
	return t, ok
}

// Specs returns the schemas in registry order (stable, so the prompt prefix
// is byte-identical from call to call).
func (r *Registry) Specs() []ToolSpec {
	out := make([]ToolSpec, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.Spec())
	}
	return out
}

// Names lists tool names, sorted.
func (r *Registry) Names() []string {
	var out []string
	for _, t := range r.tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// OutputNames lists the output tools.
func (r *Registry) OutputNames() []string {
	var out []string
	for _, t := range r.tools {
		if t.Output {
			out = append(out, t.Name)
		}
	}
	return out
}

// Output is how a turn ended.
type Output struct {
	Tool      string   `json:"tool"`
	Narration string   `json:"narration"`
	Hints     []string `json:"hints,omitempty"`
	Outcome   string   `json:"outcome,omitempty"`
}

// ToolContext is the shared mutable context of one turn's tools (seed
// 003's deps): the turn's state copy, its dice, and what the tools did.
type ToolContext struct {
	Turn   *Turn
	State  *engine.State
	Dice   *engine.Dice
	Events []engine.Event
	Output *Output
	// acted holds the combatants that have used their action this turn.
	acted map[string]bool
	// created counts what this turn created, by kind; gold and xp what it
	// granted (limits in world_tools.go).
	created  map[string]int
	gold, xp int
	seq      int
}

func (tc *ToolContext) emit(evs ...engine.Event) { tc.Events = append(tc.Events, evs...) }

// object builds a JSON schema object.
func object(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

func strEnum(desc string, values ...string) map[string]any {
	return map[string]any{"type": "string", "description": desc, "enum": values}
}

func strList(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

// decode parses tool arguments strictly into v and checks required fields
// are present and non-empty. Errors are phrased for the model.
func decode(t *Tool, args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(args, &raw); err != nil {
		return engine.Errorf(engine.EINVALID, "Arguments of %s are not a JSON object: %v.", t.Name, err)
	}
	if req, ok := t.Parameters["required"].([]string); ok {
		var missing []string
		for _, k := range req {
			if v, ok := raw[k]; !ok || string(v) == `""` || string(v) == "null" {
				missing = append(missing, k)
			}
		}
		if len(missing) > 0 {
			return engine.Errorf(engine.EINVALID, "%s needs %s.", t.Name, strings.Join(missing, ", "))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return engine.Errorf(engine.EINVALID, "Bad arguments for %s: %v.", t.Name, err)
	}
	return nil
}

func toolResult(v any) string { return mustJSON(v) }

func errf(format string, args ...any) error {
	return engine.Errorf(engine.EINVALID, format, args...)
}

func fmtList(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
