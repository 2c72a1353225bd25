package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"tavern/internal/engine"
)

// decodeArgs is what decode decodes into in these tests: strings, a
// number, a flag and a list, as tools take.
type decodeArgs struct {
	Target string   `json:"target"`
	Delta  int      `json:"delta"`
	Public bool     `json:"public"`
	Hints  []string `json:"hints"`
}

// decodeTwice is decode as it was, decoding every call twice: the map of
// raw members for the required check, then the strict decode. decode must
// give the same value and error for every input.
func decodeTwice(t *Tool, args json.RawMessage, v any) error {
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

// decodeTools take decodeArgs, by the fast path (argNames set, as
// defineTool sets them) or only the slow one ("slow").
var decodeTools = func() []*Tool {
	names, ok := flatArgNames(reflect.TypeFor[decodeArgs]())
	if !ok || !slices.Equal(names, []string{"target", "delta", "public", "hints"}) {
		panic(fmt.Sprintf("flatArgNames(decodeArgs) = %q, %v", names, ok))
	}
	return []*Tool{
		{Name: "none", Parameters: object(nil, nil), argNames: names},
		{Name: "target", Parameters: object([]string{"target"}, nil), argNames: names},
		{Name: "all", Parameters: object([]string{"target", "delta", "public", "hints"}, nil), argNames: names},
		{Name: "slow", Parameters: object([]string{"target"}, nil)},
	}
}()

// Only structs of plain fields have their names listed for the fast path.
func TestFlatArgNames(t *testing.T) {
	type inner struct{ A string }
	for _, tc := range []struct {
		typ  reflect.Type
		want []string
		ok   bool
	}{
		{reflect.TypeFor[struct{}](), []string{}, true},
		{reflect.TypeFor[struct {
			A string `json:"a,omitempty"`
			B *int   `json:",string"`
			C []float64
			D string `json:"-"`
			e string
		}](), []string{"a", "B", "C"}, true},
		{reflect.TypeFor[struct{ In inner }](), nil, false},
		{reflect.TypeFor[struct{ In []inner }](), nil, false},
		{reflect.TypeFor[struct{ inner }](), nil, false},
		{reflect.TypeFor[struct{ M map[string]string }](), nil, false},
		{reflect.TypeFor[struct{ V any }](), nil, false},
		{reflect.TypeFor[map[string]string](), nil, false},
	} {
		got, ok := flatArgNames(tc.typ)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("flatArgNames(%v) = %q, %v; want %q, %v", tc.typ, got, ok, tc.want, tc.ok)
		}
	}
}

var decodeInputs = []string{
	``, `  `, `{}`, `null`, ` null `, `{"target":"g1"}`, `{"target": "g1", "delta": -20}`, `{"target":""}`,
	`{"target":null}`, `{"target":"g1","target":""}`, `{"target":"","target":"g1"}`, `{"Target":"g1"}`,
	`{"t\u0061rget":"g1"}`, `{"target":"g\"1"}`, `{"target":"\\"}`, `{"delta":0,"public":false,"hints":[]}`,
	`{"target":"a","delta":0,"public":false,"hints":[]}`, `{"target":"a","delta":1,"public":true,"hints":["x","y"]}`,
	`{"target":"a","hints":null}`, `{"target":"a","extra":1}`, `{"target":"a","extra":{"b":[1,{"c":"}"}]}}`,
	`{"target":1}`, `{"target":"a"} `, `{"target":"a"} x`, `{"target":"a"}{}`, `{"target":"a"`, `[]`, `[1]`,
	`"target"`, `1`, `true`, `{"target":"a",}`, "{\n\t\"target\" :\r \"a\" ,\n\"delta\" : 3 }", `{"":""}`,
	`{"target":"a","hints":["]","}",""]}`, `{"delta":1e3}`, `{"delta":1.5}`, `{"target":"é"}`, "{\"target\":\"\xff\"}",
	`{"TARGET":"a","delta":2}`, `{"target":"a","hints":"x"}`, `{"target":"a","delta":"2"}`, `{"delta":99999999999999999999}`,
	`{"target":"a","target":null}`, `{"hints":["a"],"hints":null,"target":"b"}`, `{"target":"a","public":null}`,
}

func TestDecodeIsDecodeTwiceInOnePass(t *testing.T) {
	for _, tool := range decodeTools {
		for _, in := range decodeInputs {
			checkDecode(t, tool, in)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, in := range decodeInputs {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, tool := range decodeTools {
			checkDecode(t, tool, in)
		}
	})
}

func checkDecode(t *testing.T, tool *Tool, in string) {
	t.Helper()
	var got, want decodeArgs
	gotErr, wantErr := decode(tool, json.RawMessage(in), &got), decodeTwice(tool, json.RawMessage(in), &want)
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("%s: decode(%q) = %v, want %v", tool.Name, in, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decode(%q) = %+v, want %+v", tool.Name, in, got, want)
	}
}
