package hub_test

import (
	"testing"

	"tavern/internal/hub"
	"tavern/internal/store"
)

// A call whose server sent no usage is counted as unknown, not as zero
// tokens; a failed call and the offline narrator's are not.
func TestStatsUsageUnknown(t *testing.T) {
	s := hub.Stats([]store.LLMCall{
		{Model: "gpt-4o-mini", PromptTokens: 900, CompletionTokens: 100, CostUSD: 0.001},
		{Model: "mock-gm"}, // answered, no usage
		{Model: "mock-gm", Error: "timeout", ErrorKind: store.CallTimeout},
		{Model: "offline"},
	})
	if s.UsageUnknown != 1 {
		t.Errorf("UsageUnknown = %d, want 1", s.UsageUnknown)
	}
	if s.PromptTokens != 900 || s.CostUSD != 0.001 {
		t.Errorf("known usage %d tokens $%v, want 900 and $0.001", s.PromptTokens, s.CostUSD)
	}
}
