package hub_test

import (
	"context"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/hub"
	llmtest "tavern/internal/openai/openaitest"
)

// An undone turn's narration cannot be corrected: the turn played again
// took its number, and the edit would rewrite the new turn's message in
// the DM's history. It is refused with a conflict and writes nothing.
func TestEditOfAnUndoneNarration(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 11, fake)
	tid, a, _ := seatedTable(e, fake)
	ctx := context.Background()
	owner, _ := e.player("Owner")
	fake.Push(respond("The goblin grins."), respond("The goblin scowls."))
	a.act("a1", "I wave")
	old := a.event("narration")
	waitIdle(e, tid)
	if _, err := e.hub.Retcon(ctx, tid, *owner, hub.RetconRetry); err != nil {
		t.Fatal(err)
	}
	again := a.until("the narration played again", func(f frame) bool {
		return f.Type == "event" && f.Kind == "narration" && f.Seq > old.Seq
	})
	waitIdle(e, tid)
	if again.Raw == nil || dataOf(again)["text"] != "The goblin scowls." {
		t.Fatalf("played again: %s", again.Raw)
	}
	if _, err := e.hub.EditNarration(ctx, tid, *owner, old.Seq, "The hobgoblin grins."); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("editing the undone narration: %v, want conflict", err)
	}
	for _, m := range e.history(tid, engine.AgentNarrative) {
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Function.Arguments, "hobgoblin") {
				t.Errorf("the edit of the undone narration rewrote turn %d's message: %s", m.Turn, c.Function.Arguments)
			}
		}
	}
	for _, ev := range events(e, tid, old.Seq) {
		if ev.Kind == engine.EventEdit {
			t.Errorf("an edit event was written: %+v", ev)
		}
	}
	// Reloaded, the table knows the retcon from the store.
	e.shutdown()
	e.open()
	if _, err := e.hub.EditNarration(ctx, tid, *owner, old.Seq, "The hobgoblin grins."); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("editing the undone narration after a restart: %v, want conflict", err)
	}
	if _, err := e.hub.EditNarration(ctx, tid, *owner, again.Seq, "The hobgoblin scowls."); err != nil {
		t.Errorf("editing the live narration: %v", err)
	}
}
