package hub

import (
	"context"
	"testing"

	"tavern/internal/engine"
)

// TestAccessRepublishedOnlyWhenNPCsChange: at a words table, a snapshot
// leaves the published access alone, and so does publishing a batch that
// meets no new NPC; a batch after an NPC joined the state publishes one
// that names it.
func TestAccessRepublishedOnlyWhenNPCsChange(t *testing.T) {
	ctx := context.Background()
	h, _ := testHub(t, nil)
	olga := engine.Player{ID: "p-owner", Name: "Olga"}
	sum, err := h.CreateTable(ctx, olga, TableSpec{Name: "Words", NPCHP: engine.NPCHPWords})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := h.table(sum.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = tb.call(ctx, func() error {
		before := tb.access.Load()
		tb.snapshot()
		if tb.access.Load() != before {
			t.Error("a snapshot published a new access")
		}
		ev := engine.ChatEvent(olga, "Onwards.")
		ev.Seq = tb.seq + 1
		tb.publishNow(t, []engine.Event{ev})
		if tb.access.Load() != before {
			t.Error("a chat line published a new access")
		}
		next := tb.st.Clone()
		if _, _, err := next.CreateNPC("npc-moth", engine.NewNPCSpec{Name: "Great Moth", Level: 1}); err != nil {
			return err
		}
		tb.st = next
		ev.Seq++
		tb.publishNow(t, []engine.Event{ev})
		if a := tb.access.Load(); a == before || !a.npcByName["Great Moth"] {
			t.Error("the access published after an NPC joined does not name it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
