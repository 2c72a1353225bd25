package hub

import (
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// fight is a state in a fight whose turn is order[index] (an index past
// the order is the DM's bookend).
func fight(index int, ending engine.Outcome) *engine.State {
	st := &engine.State{}
	st.Game.Mode = engine.ModeCombat
	st.Game.Combat = &engine.Combat{ID: "f1", Round: 1, Index: index, Ending: ending, Order: []engine.Combatant{
		{Entry: engine.PCEntry("1"), Kind: engine.KindPC, Name: "Aldric"},
		{Entry: engine.NPCEntry("g1"), Kind: engine.KindNPC, Name: "Goblin"},
		{Entry: engine.PCEntry("2"), Kind: engine.KindPC, Name: "Bree"},
	}}
	return st
}

func explore() *engine.State {
	st := &engine.State{}
	st.Game.Mode = engine.ModeNarrative
	return st
}

func seatAct(id, seat string) engine.PendingAction {
	return engine.PendingAction{ID: id, PlayerID: "p" + seat, ClientID: "c" + id, Seat: seat, Status: engine.ActionPending}
}

func seatStart(id, seat string) engine.PendingAction {
	a := seatAct(id, seat)
	a.Kind = engine.ActionStart
	return a
}

func TestNextTurn(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		st   *engine.State
		mode string
		open []engine.PendingAction
		// prep changes the lifecycle (failures, holds) before the pick.
		prep       func(a *actions)
		wantOK     bool
		wantKind   string
		wantAction string
		wantEntry  engine.EntryID
	}{
		{name: "exploration: nothing to do", st: explore(), mode: engine.CombatTactical},
		{name: "exploration: the oldest action", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a2", "2"), seatAct("a1", "1")}, wantOK: true, wantKind: agent.TurnPlayer, wantAction: "a2"},
		{name: "exploration: a session start plays", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatStart("s1", "1")}, wantOK: true, wantKind: agent.TurnPlayer, wantAction: "s1"},
		{name: "exploration: given up actions wait for their player", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1"), seatAct("a2", "2")}, prep: func(a *actions) { giveUp(a, "a1") },
			wantOK: true, wantKind: agent.TurnPlayer, wantAction: "a2"},
		{name: "exploration: everything given up", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, prep: func(a *actions) { giveUp(a, "a1") }},
		{name: "held by a backoff", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, prep: func(a *actions) { a.holdUntil(now.Add(time.Second)) }},
		{name: "backoff over", st: explore(), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, prep: func(a *actions) { a.holdUntil(now) },
			wantOK: true, wantKind: agent.TurnPlayer, wantAction: "a1"},
		{name: "a held fight plays no DM turn", st: fight(1, ""), mode: engine.CombatTactical,
			prep: func(a *actions) { a.holdUntil(now.Add(time.Second)) }},

		{name: "tactical: the PC whose turn it is", st: fight(0, ""), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a2", "2"), seatAct("a1", "1")}, wantOK: true, wantKind: agent.TurnPlayer,
			wantAction: "a1", wantEntry: engine.PCEntry("1")},
		{name: "tactical: another seat's action waits", st: fight(0, ""), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a2", "2")}},
		{name: "tactical: the PC's action was given up", st: fight(0, ""), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, prep: func(a *actions) { giveUp(a, "a1") }},
		{name: "tactical: session starts wait for the fight's end", st: fight(0, ""), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatStart("s1", "1")}},
		{name: "tactical: the NPC's turn", st: fight(1, ""), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, wantOK: true, wantKind: agent.TurnNPC, wantEntry: engine.NPCEntry("g1")},
		{name: "tactical: the DM's bookend", st: fight(3, ""), mode: engine.CombatTactical,
			wantOK: true, wantKind: agent.TurnBookend, wantEntry: engine.BookendEntry},
		{name: "tactical: the forced resolution", st: fight(0, "victory"), mode: engine.CombatTactical,
			open: []engine.PendingAction{seatAct("a1", "1")}, wantOK: true, wantKind: agent.TurnResolution, wantEntry: engine.BookendEntry},

		{name: "narrative combat: actions in arrival order", st: fight(1, ""), mode: engine.CombatNarrative,
			open:   []engine.PendingAction{seatStart("s1", "1"), seatAct("a2", "2"), seatAct("a1", "1")},
			wantOK: true, wantKind: agent.TurnPlayer, wantAction: "a2"},
		{name: "narrative combat: no DM turns", st: fight(3, ""), mode: engine.CombatNarrative},
		{name: "narrative combat: the forced resolution", st: fight(0, "defeat"), mode: engine.CombatNarrative,
			open: []engine.PendingAction{seatAct("a1", "1")}, wantOK: true, wantKind: agent.TurnResolution, wantEntry: engine.BookendEntry},

		{name: "unset mode: any seat's action on a PC's turn", st: fight(0, ""), mode: "",
			open: []engine.PendingAction{seatAct("a2", "2")}, wantOK: true, wantKind: agent.TurnPlayer,
			wantAction: "a2", wantEntry: engine.PCEntry("1")},
		{name: "unset mode: the NPC's turn", st: fight(1, ""), mode: "",
			open: []engine.PendingAction{seatAct("a2", "2")}, wantOK: true, wantKind: agent.TurnNPC, wantEntry: engine.NPCEntry("g1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions(tc.open, nil)
			if tc.prep != nil {
				tc.prep(a)
			}
			p, ok := nextTurn(tc.st, tc.mode, a, now)
			if ok != tc.wantOK {
				t.Fatalf("ok = %v (%+v), want %v", ok, p, tc.wantOK)
			}
			if !ok {
				return
			}
			if p.kind != tc.wantKind {
				t.Errorf("kind = %q, want %q", p.kind, tc.wantKind)
			}
			action := ""
			if p.action != nil {
				action = p.action.ID
			}
			if action != tc.wantAction {
				t.Errorf("action = %q, want %q", action, tc.wantAction)
			}
			if p.entry.Entry != tc.wantEntry {
				t.Errorf("entry = %q, want %q", p.entry.Entry, tc.wantEntry)
			}
		})
	}
}

// The pick's action is a copy: the job plays it whatever becomes of the
// open list meanwhile.
func TestNextTurnCopiesTheAction(t *testing.T) {
	a := newActions([]engine.PendingAction{seatAct("a1", "1")}, nil)
	p, ok := nextTurn(explore(), engine.CombatTactical, a, time.Time{})
	if !ok {
		t.Fatal("nothing picked")
	}
	a.open[0].Text = "changed"
	if p.action.Text == "changed" {
		t.Error("the pick shares the open list's action")
	}
}

func TestWaitingSeat(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   *engine.State
		mode string
		want string
	}{
		{name: "exploration", st: explore(), mode: engine.CombatTactical},
		{name: "a PC's tactical turn", st: fight(2, ""), mode: engine.CombatTactical, want: "2"},
		{name: "an NPC's turn", st: fight(1, ""), mode: engine.CombatTactical},
		{name: "the bookend", st: fight(3, ""), mode: engine.CombatTactical},
		{name: "the fight is ending", st: fight(0, "victory"), mode: engine.CombatTactical},
		{name: "narrative combat", st: fight(0, ""), mode: engine.CombatNarrative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := waitingSeat(tc.st, tc.mode); got != tc.want {
				t.Errorf("waitingSeat = %q, want %q", got, tc.want)
			}
		})
	}
}
