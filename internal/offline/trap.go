package offline

// Traps: the engine rolls a trap on the way the party took (move_party's
// result names it and how it went); the narrator only tells it.

import (
	"fmt"
	"strings"

	"tavern/internal/engine"
)

// trapTold narrates how the trap went, or "" if there was none.
func (t *offlineTurn) trapTold() string {
	moved, ok := t.stepNamed("move_party")
	if !ok || moved.Err {
		return ""
	}
	tr := decodeStep[struct{ Trap *engine.TrapSprung }](moved).Trap
	if tr == nil {
		return ""
	}
	if tr.Success {
		return fmt.Sprintf("%s %s (%s %d): %s spots it in time and leads the party safely past.", strings.TrimSuffix(tr.Description, "."), t.pick("trap", "— but", "— yet"), strings.ToUpper(tr.Stat), tr.Roll, tr.Leader)
	}
	return fmt.Sprintf("%s (%s %d): it catches %s, who is left at %d/%d HP.", strings.TrimSuffix(tr.Description, "."), strings.ToUpper(tr.Stat), tr.Roll, tr.Leader, tr.HP, tr.MaxHP)
}
