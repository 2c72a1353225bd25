package web

import "tavern/internal/engine"

// revised returns the story's events as the table tells it now
// (PROTOCOL.md "Undo, notes and the owner's word to the DM"): the events
// a retcon retracted are left out unless keepRetracted, and each
// narration reads as its last edit.
func revised(evs []engine.Event, keepRetracted bool) []engine.Event {
	var retcons []engine.RetconData
	edits := map[int64]string{}
	for _, ev := range evs {
		switch d := ev.Data.(type) {
		case engine.RetconData:
			retcons = append(retcons, d)
		case engine.EditData:
			edits[d.Seq] = d.Text
		}
	}
	if len(retcons) == 0 && len(edits) == 0 {
		return evs
	}
	out := make([]engine.Event, 0, len(evs))
	for _, ev := range evs {
		if !keepRetracted && retractedBy(ev, retcons) {
			continue
		}
		if text, ok := edits[ev.Seq]; ok {
			if n, ok := ev.Data.(engine.NarrationData); ok {
				n.Text = text
				ev.Data = n
			}
		}
		out = append(out, ev)
	}
	return out
}

func retractedBy(ev engine.Event, retcons []engine.RetconData) bool {
	for _, r := range retcons {
		if r.Retracted(ev) {
			return true
		}
	}
	return false
}
