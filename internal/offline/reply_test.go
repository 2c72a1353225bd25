package offline

import (
	"encoding/json"
	"hash/fnv"
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

func TestHashIsWhatItReplaced(t *testing.T) {
	for _, s := range []string{"", " ", "one", "one two three four", "one two three four ", "a b c d e f g h i",
		"  double  spaces  and a trailing one ", "The goblin lunges; Aldric parries and strikes back, once, twice."} {
		h := fnv.New32a()
		h.Write([]byte(s + "|salt"))
		if got, want := fnvHash(s, "|", "salt"), h.Sum32(); got != want {
			t.Errorf("fnvHash(%q) = %d, want %d (hash/fnv's)", s, got, want)
		}
	}
}
