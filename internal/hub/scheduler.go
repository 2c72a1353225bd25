package hub

import (
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// The scheduler chooses what plays next. It is a pure function of the
// state, the table's combat mode and its actions, with the clock as a
// parameter: the table calls it after every change (maybeStart) and runs
// what it picks.

// pick is a turn to play: its kind, the action it plays (a copy; nil for
// a DM turn) and the initiative entry it is played for.
type pick struct {
	kind   string
	action *engine.PendingAction
	entry  engine.Combatant
}

// nextTurn decides what plays next at now, if anything: nothing while a
// backoff holds; in a fight, the forced resolution, the DM's bookend or
// NPC turns, or the active PC's action (tactical), or the oldest action
// (free and narrative combat, where session starts wait for the fight to
// end); out of a fight, the oldest action. An action the DM gave up on
// waits for its player.
func nextTurn(st *engine.State, mode string, acts *actions, now time.Time) (pick, bool) {
	if acts.held(now) {
		return pick{}, false
	}
	cb := st.Game.Combat
	if cb == nil {
		for _, a := range acts.open {
			if acts.ready(a) {
				return pick{kind: agent.TurnPlayer, action: &a}, true
			}
		}
		return pick{}, false
	}
	if cb.Ending != "" {
		return pick{kind: agent.TurnResolution, entry: engine.Combatant{Entry: engine.BookendEntry, Kind: engine.KindBookend, Name: "DM"}}, true
	}
	if mode == engine.CombatNarrative {
		// No initiative queue: actions in arrival order, no DM turns.
		for _, a := range acts.open {
			if acts.ready(a) && a.Kind != engine.ActionStart {
				return pick{kind: agent.TurnPlayer, action: &a}, true
			}
		}
		return pick{}, false
	}
	cur := cb.Current()
	switch cur.Kind {
	case engine.KindBookend:
		return pick{kind: agent.TurnBookend, entry: cur}, true
	case engine.KindNPC:
		return pick{kind: agent.TurnNPC, entry: cur}, true
	}
	for _, a := range acts.open {
		if !acts.ready(a) || a.Kind == engine.ActionStart {
			continue // session starts wait for the fight to end
		}
		if mode == engine.CombatTactical && engine.PCEntry(a.Seat) != cur.Entry {
			continue
		}
		return pick{kind: agent.TurnPlayer, action: &a, entry: cur}, true
	}
	return pick{}, false
}

// waitingSeat returns the seat whose tactical turn is waiting for its
// player, or "".
func waitingSeat(st *engine.State, mode string) string {
	cb := st.Game.Combat
	if cb == nil || cb.Ending != "" || mode != engine.CombatTactical {
		return ""
	}
	cur := cb.Current()
	if cur.Kind != engine.KindPC {
		return ""
	}
	seat, _ := cur.Entry.Seat()
	return seat
}
