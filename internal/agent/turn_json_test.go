package agent

import (
	"encoding/json"
	"reflect"
	"testing"
)

// trickyStrings are strings whose JSON needs every kind of escape
// encoding/json makes.
var trickyStrings = []string{"", "Goblin 2", `"quoted" \ back`, "<b>&amp;</b>", "line\nbreak\r\ttab\b\f\x00\x1f\x7f",
	"café ☕ 𝄞", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", "</context>"}

// fillTurnContext sets every field of v, recursively: strings from
// trickyStrings (turned by seed), numbers, flags, slices of two, pointers
// to filled values. With empty set it leaves slices empty but not nil.
func fillTurnContext(v reflect.Value, seed int, empty bool) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(trickyStrings[seed%len(trickyStrings)])
	case reflect.Int:
		v.SetInt(int64(seed*7 - 20))
	case reflect.Bool:
		v.SetBool(seed%2 == 0)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillTurnContext(v.Elem(), seed+1, empty)
	case reflect.Slice:
		n := 2
		if empty {
			n = 0
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fillTurnContext(v.Index(i), seed+i+1, empty)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillTurnContext(v.Field(i), seed+i, empty)
		}
	}
}

func TestTurnContextJSON(t *testing.T) {
	cases := map[string]TurnContext{"zero": {}}
	for seed := range len(trickyStrings) {
		var full, empty TurnContext
		fillTurnContext(reflect.ValueOf(&full).Elem(), seed, false)
		fillTurnContext(reflect.ValueOf(&empty).Elem(), seed, true)
		cases["full "+trickyStrings[seed]] = full
		cases["empty lists "+trickyStrings[seed]] = empty
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(&tc)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.appendJSON(nil); string(got) != string(want) {
				t.Errorf("appendJSON:\n%s\nwant (json.Marshal):\n%s", got, want)
			}
		})
	}
}

func FuzzTurnContextJSON(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tc := TurnContext{Kind: s, Location: &LocationView{Description: s, NPCs: []NPCBrief{{Name: s, Statuses: []string{s}}}}}
		want, _ := json.Marshal(&tc)
		if got := tc.appendJSON(nil); string(got) != string(want) {
			t.Errorf("appendJSON = %s, want %s", got, want)
		}
	})
}
