package hub

import (
	"context"
	"testing"

	"tavern/internal/engine"
)

// BenchmarkPublishWords measures publishing one chat line at a table in
// words mode (NPC health in words), with no socket: what publish itself
// costs per batch, beside the fan-out BenchmarkFanout measures.
// 2026-11-26, 2 cores at load 24.5: remaking the access on every batch,
// 933 B and 9 allocs per op (7-21 µs); republished only when the NPCs
// change, 549 B and 5 allocs (5.3-7.9 µs).
func BenchmarkPublishWords(b *testing.B) {
	ctx := context.Background()
	h, _ := testHub(b, nil)
	sum, err := h.CreateTable(ctx, engine.Player{ID: "p-owner", Name: "Olga"}, TableSpec{Name: "Words", NPCHP: engine.NPCHPWords})
	if err != nil {
		b.Fatal(err)
	}
	t, err := h.table(sum.ID)
	if err != nil {
		b.Fatal(err)
	}
	err = t.call(ctx, func() error {
		if !t.st.Config.Words() || len(t.st.World.NPCs) == 0 {
			b.Fatalf("words %v with %d NPCs", t.st.Config.Words(), len(t.st.World.NPCs))
		}
		ev := engine.ChatEvent(engine.Player{ID: "p-owner", Name: "Olga"}, "Onwards.")
		seq := t.seq
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			seq++
			ev.Seq = seq
			data, err := eventData([]engine.Event{ev})
			if err != nil {
				return err
			}
			t.publish([]engine.Event{ev}, data)
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
