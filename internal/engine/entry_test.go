package engine

import "testing"

func TestEntryID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		e         EntryID
		pc, npc   bool
		seat, ref string
	}{
		{"pc", PCEntry("2"), true, false, "2", ""},
		{"npc", NPCEntry("snikket"), false, true, "", "snikket"},
		{"bookend", BookendEntry, false, false, "", ""},
		{"npc id with a colon", NPCEntry("pc:1"), false, true, "", "pc:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seat, isPC := tc.e.Seat()
			ref, isNPC := tc.e.NPC()
			if isPC != tc.pc || tc.e.IsPC() != tc.pc || seat != tc.seat {
				t.Errorf("%s: Seat() = %q, %v; IsPC %v; want %q, %v", tc.e, seat, isPC, tc.e.IsPC(), tc.seat, tc.pc)
			}
			if isNPC != tc.npc || tc.e.IsNPC() != tc.npc || ref != tc.ref {
				t.Errorf("%s: NPC() = %q, %v; IsNPC %v; want %q, %v", tc.e, ref, isNPC, tc.e.IsNPC(), tc.ref, tc.npc)
			}
		})
	}
}
