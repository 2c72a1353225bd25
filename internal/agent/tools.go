package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"

	"tavern/internal/engine"
)

// Tool is one function a model may call. Run validates its arguments
// against the turn's state and returns a result text for the model, or an
// error whose message tells the model what to do instead. ctx is the
// turn's: it carries the turn's deadline and its table (see TableFrom).
type Tool struct {
	Name        string
	Description string
	Parameters  map[string]any
	// Output tools end the turn.
	Output bool
	Run    func(ctx context.Context, tc *ToolContext, args json.RawMessage) (string, error)
	// argNames are the JSON names of the arguments' fields when decode may
	// take its fast path for them (see flatArgNames); nil if not.
	argNames []string
}

// Spec returns the tool's schema for the model.
func (t *Tool) Spec() ToolSpec {
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.Parameters}
}

// Toolset is the ordered set of tools one agent may call. A toolset is a
// value built with what its tools depend on: [NewNarrativeTools] and
// [NewCombatTools] take a [ToolDeps] (memory index, limits) and their
// tools close over it; what varies per turn comes in through the
// [ToolContext] and the ctx of each call. A new agent gets its own
// toolset the same way — a NewXTools(deps) constructor over its own
// dependencies (the admin data agent: query_data and visualize over a
// read-only store) — never package variables or init. Immutable once
// built; safe for concurrent use, so one toolset serves every turn.
type Toolset struct {
	tools []*Tool
	by    map[string]*Tool
	specs []ToolSpec
}

// NewToolset builds a toolset from tools, in order.
func NewToolset(tools ...*Tool) *Toolset {
	r := &Toolset{by: map[string]*Tool{}}
	for _, t := range tools {
		r.tools = append(r.tools, t)
		r.by[t.Name] = t
		r.specs = append(r.specs, t.Spec())
	}
	return r
}

// Get returns the named tool.
func (r *Toolset) Get(name string) (*Tool, bool) {
	t, ok := r.by[name]
	return t, ok
}

// Specs returns the schemas in toolset order (stable, so the prompt prefix
// is byte-identical from call to call). They are made once, with the
// toolset, and shared by every call: the caller must not modify them.
func (r *Toolset) Specs() []ToolSpec { return r.specs }

// Names lists tool names, sorted.
func (r *Toolset) Names() []string {
	var out []string
	for _, t := range r.tools {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// OutputNames lists the output tools.
func (r *Toolset) OutputNames() []string {
	var out []string
	for _, t := range r.tools {
		if t.Output {
			out = append(out, t.Name)
		}
	}
	return out
}

// ToolDeps is what the game agents' toolsets depend on beyond the turn.
type ToolDeps struct {
	// Memory, if set, adds the tools search_memories and
	// recall_session_details over the memories of the turn's table.
	Memory MemoryIndex
	// Limits bound what one turn may create or grant (zero fields: the
	// defaults of DefaultLimits).
	Limits Limits
}

// NewNarrativeTools returns the narrative agent's toolset: the world tools
// of seed 001, skill_check, the output tools respond and start_combat,
// and the memory tools when deps has a memory index.
func NewNarrativeTools(deps ToolDeps) *Toolset {
	lim := deps.Limits.withDefaults()
	tools := []*Tool{lookTool(), locationInfoTool(), moveTool(), npcInfoTool(), npcsAtTool(), playerInfoTool(), relationshipTool(), questsTool(),
		allLocationsTool(), templatesTool(), itemsAtTool(), inventoryTool(), npcInventoryTool(),
		pickupTool(), dropTool(), giveTool(), transferTool(), buyTool(), sellTool(), drinkTool(), equipTool(),
		createForPlayerTool(lim), createForNPCTool(lim), spawnItemTool(lim),
		playerHealthTool(), playerGoldTool(lim), playerXPTool(lim),
		moveNPCTool(), npcHealthTool(), behaviorTool(), dispositionTool(), createNPCTool(lim),
		updateRelationshipTool(), createQuestTool(lim), questStatusTool(), createLocationTool(lim), createTemplateTool(lim), skillCheckTool(),
		restTool(), respondTool(), startCombatTool()}
	return NewToolset(append(tools, memoryTools(deps.Memory)...)...)
}

// NewCombatTools returns the combat agent's toolset: the actions of seed
// 000's combat agent, the output tools continue_combat and end_combat, and
// the memory tools when deps has a memory index.
func NewCombatTools(deps ToolDeps) *Toolset {
	tools := []*Tool{attackTool(), useAbilityTool(), defendTool(), fleeTool(), useItemTool(), healTool(), applyDamageTool(), applyEffectTool(),
		addCombatantTool(), statusTool(), snapshotTool(), continueTool(), endCombatTool()}
	return NewToolset(append(tools, memoryTools(deps.Memory)...)...)
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
	// Data is the data agent's run (data_tools.go); nil in game turns.
	Data *DataRun
	// acted holds the combatants that have used their action this turn.
	acted map[engine.EntryID]bool
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

// defineTool builds a tool whose arguments decode strictly into T and
// whose result, unless run returns a string, is sent as JSON.
func defineTool[T any](name, desc string, required []string, props map[string]any, run func(tc *ToolContext, a T) (any, error)) *Tool {
	t := &Tool{Name: name, Description: desc, Parameters: object(required, props)}
	if names, ok := flatArgNames(reflect.TypeFor[T]()); ok {
		t.argNames = names
	}
	t.Run = func(_ context.Context, tc *ToolContext, args json.RawMessage) (string, error) {
		var a T
		if err := decode(t, args, &a); err != nil {
			return "", err
		}
		out, err := run(tc, a)
		if err != nil {
			return "", err
		}
		if s, ok := out.(string); ok {
			return s, nil
		}
		return toolResult(out), nil
	}
	return t
}

// defineOutput is defineTool for an output tool.
func defineOutput[T any](name, desc string, required []string, props map[string]any, run func(tc *ToolContext, a T) (any, error)) *Tool {
	t := defineTool(name, desc, required, props, run)
	t.Output = true
	return t
}

// decode parses tool arguments strictly into v and checks required fields
// are present and non-empty. Errors are phrased for the model.
//
// Well-formed calls take a fast path: arguments with every key one of the
// tool's argNames exactly decode the same without a strict decoder (there
// is no unknown field to refuse), so json.Unmarshal decodes them and one
// scan of their members checks the keys and the required fields. Anything
// else takes the slow path, whose errors say what is wrong first.
func decode(t *Tool, args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	required, _ := t.Parameters["required"].([]string)
	if t.argNames != nil && json.Unmarshal(args, v) == nil {
		if missing, ok := missingRequired(args, required, t.argNames); ok {
			if len(missing) > 0 {
				return engine.Errorf(engine.EINVALID, "%s needs %s.", t.Name, strings.Join(missing, ", "))
			}
			return nil
		}
		reflect.ValueOf(v).Elem().SetZero() // decode afresh below
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(args, &raw); err != nil {
		return engine.Errorf(engine.EINVALID, "Arguments of %s are not a JSON object: %v.", t.Name, err)
	}
	var missing []string
	for _, k := range required {
		if v, ok := raw[k]; !ok || string(v) == `""` || string(v) == "null" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return engine.Errorf(engine.EINVALID, "%s needs %s.", t.Name, strings.Join(missing, ", "))
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return engine.Errorf(engine.EINVALID, "Bad arguments for %s: %v.", t.Name, err)
	}
	return nil
}

// flatArgNames returns the JSON names of the fields of t, a struct of
// plain fields (strings, numbers, flags, and lists or pointers of them):
// for such a struct, a strict decoder refuses exactly the objects with a
// key that is not one of those names (or one of them in other case,
// which the fast path of decode leaves to the slow one). ok is false for
// any other type: nested structs would need their own names checked.
func flatArgNames(t reflect.Type) (names []string, ok bool) {
	if t.Kind() != reflect.Struct {
		return nil, false
	}
	names = []string{}
	for f := range t.Fields() {
		if f.Anonymous || !plainKind(f.Type) {
			return nil, false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names, true
}

func plainKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Pointer:
		return plainKind(t.Elem())
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// missingRequired returns the required members that args, valid JSON,
// lacks or leaves empty ("" or null), as looking them up in the map of
// its raw members would: a repeated key counts by its last value. ok is
// false when the scan cannot tell or must refuse: args is not an object
// or null, a key has escapes (which that map would hold unescaped), or a
// key is not one of known.
func missingRequired(args []byte, required, known []string) (missing []string, ok bool) {
	s := jsonScan{b: args}
	s.space()
	if s.peek() == 'n' {
		return required, true // null: a map with no members
	}
	if len(required) > 64 || !s.eat('{') {
		return nil, false
	}
	var filled uint64 // bit i: required[i] is present and not empty
	for s.space(); !s.eat('}'); s.space() {
		key, escaped := s.str()
		s.space()
		if escaped || !slices.Contains(known, string(key)) || !s.eat(':') {
			return nil, false
		}
		s.space()
		val := s.value()
		if val == nil {
			return nil, false
		}
		for i, k := range required {
			if string(key) == k {
				if string(val) == `""` || string(val) == "null" {
					filled &^= 1 << i
				} else {
					filled |= 1 << i
				}
			}
		}
		s.space()
		s.eat(',')
	}
	for i, k := range required {
		if filled&(1<<i) == 0 {
			missing = append(missing, k)
		}
	}
	return missing, true
}

// jsonScan walks JSON that a decoder has already accepted, to find its
// top-level members without decoding them.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *jsonScan) eat(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

func (s *jsonScan) space() {
	for isSpace(s.peek()) {
		s.i++
	}
}

// str reads a string and returns what is between its quotes, and whether
// that has escapes; nil if there is no string here.
func (s *jsonScan) str() (body []byte, escaped bool) {
	if !s.eat('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			return s.b[start : s.i-1], escaped
		}
	}
	return nil, false
}

// value skips one value and returns its text; nil if there is none.
func (s *jsonScan) value() []byte {
	start := s.i
	switch s.peek() {
	case '"':
		if body, _ := s.str(); body == nil {
			return nil
		}
	case '{', '[':
		if !s.nested() {
			return nil
		}
	default: // a number, true, false or null
		for c := s.peek(); c != 0 && c != ',' && c != '}' && c != ']' && !isSpace(c); c = s.peek() {
			s.i++
		}
	}
	if s.i == start {
		return nil
	}
	return s.b[start:s.i]
}

// nested skips an object or an array, whatever it holds.
func (s *jsonScan) nested() bool {
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if body, _ := s.str(); body == nil {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		s.i++
		if depth == 0 {
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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

// propsOf builds the schema properties of the arguments type T from its
// fields: each field's JSON name and type (strings, integers, booleans,
// nested structs as objects), with the description and constraints
// written in more under that name. It panics, when the toolset is built,
// if more names a property T lacks, so a schema cannot drift from the
// type that decodes its arguments.
func propsOf[T any](more map[string]map[string]any) map[string]any {
	return structProps(reflect.TypeFor[T](), more, "")
}

func structProps(t reflect.Type, more map[string]map[string]any, prefix string) map[string]any {
	props := map[string]any{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := map[string]any{}
		switch f.Type.Kind() {
		case reflect.String:
			p["type"] = "string"
		case reflect.Bool:
			p["type"] = "boolean"
		case reflect.Int, reflect.Int64:
			p["type"] = "integer"
		case reflect.Struct:
			p = object(nil, structProps(f.Type, more, prefix+name+"."))
		default:
			panic("propsOf: unsupported field " + f.Name)
		}
		for k, v := range more[prefix+name] {
			p[k] = v
		}
		props[name] = p
	}
	for name := range more {
		if rest, ok := strings.CutPrefix(name, prefix); ok && !strings.Contains(rest, ".") && props[rest] == nil {
			panic("propsOf: no field " + name)
		}
	}
	return props
}
