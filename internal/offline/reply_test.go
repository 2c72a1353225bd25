package offline

import (
	"encoding/json"
	"testing"
)

// What streams of a reply is its narration as a reader of its tool call
// reads it back.
func TestReplyNarrationIsWhatItsCallSays(t *testing.T) {
	for _, r := range []reply{
		call("look", map[string]any{}),
		call("respond", map[string]any{"narration": "", "hints": []string{"go"}}),
		call("respond", map[string]any{"narration": `The goblin says "<no> & no" \ twice.` + "\n"}),
		call("continue_combat", map[string]any{"narration": "bad \xff\xfe utf-8 \xe2\x82 and \u2028"}),
	} {
		var a struct {
			Narration string `json:"narration"`
		}
		if err := json.Unmarshal([]byte(r.toolCall().Function.Arguments), &a); err != nil {
			t.Fatal(err)
		}
		if got := r.narration(); got != a.Narration {
			t.Errorf("%s: narration %q, its call says %q", r.name, got, a.Narration)
		}
	}
}
