package offline

// Traps: a trap on the way the party took (move_party's result names it)
// tests whoever leads with a skill check, and a failure costs the trap's
// damage.

import (
	"fmt"
	"strings"
)

type trapView struct {
	Description string `json:"description"`
	Stat        string `json:"stat"`
	Difficulty  int    `json:"difficulty"`
	Damage      string `json:"damage"`
}

// trapped returns the next call of the trap the party walked into this
// turn, if there is one and it is not played out yet.
func (t *offlineTurn) trapped() (reply, bool) {
	moved, ok := t.stepNamed("move_party")
	if !ok || moved.Err {
		return reply{}, false
	}
	tr := decodeStep[struct{ Trap *trapView }](moved).Trap
	if tr == nil {
		return reply{}, false
	}
	check, ok := t.stepNamed("skill_check")
	if !ok {
		return call("skill_check", map[string]any{"stat": tr.Stat, "difficulty": tr.Difficulty}), true
	}
	if check.Err || decodeStep[struct{ Success bool }](check).Success {
		return reply{}, false
	}
	if _, ok := t.stepNamed("update_player_health"); !ok {
		return call("update_player_health", map[string]any{"dice": tr.Damage, "kind": "damage", "reason": "a trap: " + tr.Description}), true
	}
	return reply{}, false
}

// trapTold narrates how the trap went, or "" if there was none.
func (t *offlineTurn) trapTold() string {
	moved, ok := t.stepNamed("move_party")
	if !ok || moved.Err {
		return ""
	}
	tr := decodeStep[struct{ Trap *trapView }](moved).Trap
	check, ok := t.stepNamed("skill_check")
	if tr == nil || !ok || check.Err {
		return ""
	}
	c := decodeStep[struct {
		Success bool
		Roll    int
	}](check)
	if c.Success {
		return fmt.Sprintf("%s %s (%s %d): %s spots it in time and leads the party safely past.", strings.TrimSuffix(tr.Description, "."), t.pick("trap", "— but", "— yet"), strings.ToUpper(tr.Stat), c.Roll, t.actorName())
	}
	hurt, _ := t.stepNamed("update_player_health")
	h := decodeStep[struct {
		HP    int `json:"hp"`
		MaxHP int `json:"max_hp"`
	}](hurt)
	return fmt.Sprintf("%s (%s %d): it catches %s, who is left at %d/%d HP.", strings.TrimSuffix(tr.Description, "."), strings.ToUpper(tr.Stat), c.Roll, t.actorName(), h.HP, h.MaxHP)
}
