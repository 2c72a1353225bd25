package offline

import (
	"regexp"
	"strings"
)

// The table's notes (the context's "notes") are facts the DM honours. The
// narrator reads the ones it can: names. "Old is called New" (or "is
// named", "goes by") makes every "Old" of its narration read "New". The
// notes never reach a tool call: they cannot change a die, HP or reward.

var namingNote = regexp.MustCompile(`^(?i:the\s+)?(.+?)\s+(?i:is\s+called|is\s+named|goes\s+by)\s+(.+?)[.!]?$`)

// renames returns the (old, new) pairs the turn's notes name, in order.
func (t *offlineTurn) renames() []string {
	var pairs []string
	for _, n := range t.Ctx.Notes {
		m := namingNote.FindStringSubmatch(strings.TrimSpace(n))
		if m == nil {
			continue
		}
		old, name := strings.TrimSpace(m[1]), strings.Trim(strings.TrimSpace(m[2]), `"'`)
		if old == "" || name == "" || strings.EqualFold(old, name) {
			continue
		}
		pairs = append(pairs, old, name)
	}
	return pairs
}

// honourNotes applies the notes' names to the narration of r, whatever
// its tool.
func (t *offlineTurn) honourNotes(r reply) {
	narration, ok := r.args["narration"].(string)
	if !ok {
		return
	}
	if pairs := t.renames(); len(pairs) > 0 {
		r.args["narration"] = strings.NewReplacer(pairs...).Replace(narration)
	}
}
