package agent

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestMessageJSON(t *testing.T) {
	cases := map[string]Message{"zero": {}, "empty tool calls": {Role: "assistant", ToolCalls: []ToolCall{}}}
	for seed := range len(trickyStrings) {
		var full Message
		fillTurnContext(reflect.ValueOf(&full).Elem(), seed, false)
		cases["full "+trickyStrings[seed]] = full
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.AppendJSON(nil); string(got) != string(want) {
				t.Errorf("AppendJSON:\n%s\nwant (json.Marshal):\n%s", got, want)
			}
		})
	}
}

func FuzzMessageJSON(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := Message{Role: s, Content: s, ToolCallID: s, ToolCalls: []ToolCall{{ID: s, Type: s, Function: FunctionCall{Name: s, Arguments: s}}}}
		want, _ := json.Marshal(m)
		if got := m.AppendJSON(nil); string(got) != string(want) {
			t.Errorf("AppendJSON = %s, want %s", got, want)
		}
	})
}
