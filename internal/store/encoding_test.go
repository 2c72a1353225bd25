package store

import "testing"

func TestErasedEventData(t *testing.T) {
	tests := []struct {
		name, kind, in, want string
	}{
		{"chat", "chat", `{"name":"Quill","player_id":"p1","text":"zebra \u003cb\u003e"}`,
			`{"name":"deleted player","player_id":"p1","text":""}`},
		{"others' bytes kept", "action", `{"action_id":"a1","character_id":"c1","name":"Q\u00e9","player_id":"p1","text":"look \u003c here"}`,
			`{"action_id":"a1","character_id":"c1","name":"deleted player","player_id":"p1","text":"look \u003c here"}`},
		{"spaced, as jsonb wrote it", "chat", `{"name": "Quill", "text": "hi", "player_id": "p1"}`,
			`{"name": "deleted player", "text": "", "player_id": "p1"}`},
		{"nested and numbers", "player_joined", `{"n":{"name":"inner"},"x":12,"name":"Q","y":[1,{"name":2}]}`,
			`{"n":{"name":"inner"},"x":12,"name":"deleted player","y":[1,{"name":2}]}`},
		{"no name", "player_left", `{"player_id":"p1","seat":"1"}`, `{"player_id":"p1","seat":"1"}`},
		{"a key escaped", "chat", `{"n\u0061me":"Q","text":"t"}`, `{"n\u0061me":"deleted player","text":""}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ErasedEventData(tc.kind, []byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("ErasedEventData(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"name":`, ``} {
		if _, err := ErasedEventData("chat", []byte(bad)); err == nil {
			t.Errorf("ErasedEventData(%q): no error", bad)
		}
	}
}
