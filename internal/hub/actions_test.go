package hub

import (
	"fmt"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// act is a player's open act for the lifecycle's tests.
func act(id, player, clientID string) engine.PendingAction {
	return engine.PendingAction{ID: id, PlayerID: player, ClientID: clientID, Seat: "1", Status: engine.ActionPending}
}

func start(id, player, charID string) engine.PendingAction {
	a := act(id, player, "start:"+charID)
	a.CharacterID, a.Kind = charID, engine.ActionStart
	return a
}

// giveUp fails id until the DM gives up on it.
func giveUp(a *actions, id string) {
	for !a.gaveUp(id) {
		a.fail(id, "boom")
	}
}

func TestActionsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup brings the lifecycle to the case's point.
		setup    func(a *actions)
		clientID string
		want     admission
		wantOpen string // the open action the verdict names
		wantDone string // the closed act's state
	}{
		{name: "nothing open", setup: func(*actions) {}, clientID: "c1", want: admitNew},
		{name: "a session start takes no slot", setup: func(a *actions) { a.admitStart(start("s1", "p1", "ch1")) },
			clientID: "c1", want: admitNew},
		{name: "another player's act is not in the way", setup: func(a *actions) { a.admit(act("a1", "p2", "c1")) },
			clientID: "c1", want: admitNew},
		{name: "resent while open", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")) },
			clientID: "c1", want: admitResent, wantOpen: "a1"},
		{name: "resent after the DM gave up", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")); giveUp(a, "a1") },
			clientID: "c1", want: admitResent, wantOpen: "a1"},
		{name: "resent once resolved", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")); a.close("a1", store.ActionResolved) },
			clientID: "c1", want: admitClosed, wantDone: store.ActionResolved},
		{name: "resent once abandoned", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")); a.abandon("a1", false) },
			clientID: "c1", want: admitClosed, wantDone: store.ActionAbandoned},
		{name: "previous act still waits", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")) },
			clientID: "c2", want: admitBusy, wantOpen: "a1"},
		{name: "previous act failed once: still busy", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")); a.fail("a1", "boom") },
			clientID: "c2", want: admitBusy, wantOpen: "a1"},
		{name: "previous act given up: replaced", setup: func(a *actions) { a.admit(act("a1", "p1", "c1")); giveUp(a, "a1") },
			clientID: "c2", want: admitReplace, wantOpen: "a1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions(nil, nil)
			tc.setup(a)
			v := a.check("p1", tc.clientID)
			if v.admission != tc.want {
				t.Fatalf("admission = %d, want %d", v.admission, tc.want)
			}
			if tc.wantOpen != "" && v.open.ID != tc.wantOpen {
				t.Errorf("open = %q, want %q", v.open.ID, tc.wantOpen)
			}
			if tc.wantDone != "" && v.closed.State != tc.wantDone {
				t.Errorf("closed state = %q, want %q", v.closed.State, tc.wantDone)
			}
		})
	}
}

func TestActionsAttempts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int
		// wantBackoff is the backoff after the last failure; 0: given up.
		wantBackoff time.Duration
		wantGaveUp  bool
	}{
		{name: "first failure waits a second", fails: 1, wantBackoff: time.Second},
		{name: "second failure waits four", fails: 2, wantBackoff: 4 * time.Second},
		{name: "third failure gives up", fails: 3, wantGaveUp: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions([]engine.PendingAction{act("a1", "p1", "c1")}, nil)
			var (
				n       int
				life    store.ActionLife
				backoff time.Duration
			)
			for range tc.fails {
				n, life, backoff = a.fail("a1", "the model timed out")
			}
			if n != tc.fails || life.Attempts != tc.fails {
				t.Errorf("attempts = %d (life %d), want %d", n, life.Attempts, tc.fails)
			}
			if life.State != store.ActionFailed || life.Error != "the model timed out" {
				t.Errorf("life = %+v, want failed with the error", life)
			}
			if backoff != tc.wantBackoff {
				t.Errorf("backoff = %v, want %v", backoff, tc.wantBackoff)
			}
			if got := a.gaveUp("a1"); got != tc.wantGaveUp {
				t.Errorf("gaveUp = %v, want %v", got, tc.wantGaveUp)
			}
			if got := a.waitsOn("1"); got == tc.wantGaveUp {
				t.Errorf("waitsOn = %v, want %v", got, !tc.wantGaveUp)
			}
			// Sent again: only an act the DM gave up on is tried anew.
			l, retried := a.resend("a1")
			if retried != tc.wantGaveUp {
				t.Fatalf("resend retried = %v, want %v", retried, tc.wantGaveUp)
			}
			if retried && (l.State != store.ActionPending || a.gaveUp("a1") || !a.ready(act("a1", "p1", "c1"))) {
				t.Errorf("after resend: life %+v, gaveUp %v; want pending and ready", l, a.gaveUp("a1"))
			}
		})
	}
}

func TestActionsHold(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		// run holds and lifts; the hold is asked about at t0+1s.
		run      func(a *actions)
		wantHeld bool
	}{
		{name: "no hold", run: func(*actions) {}},
		{name: "held for the backoff", run: func(a *actions) { a.holdUntil(t0.Add(2 * time.Second)) }, wantHeld: true},
		{name: "backoff over", run: func(a *actions) { a.holdUntil(t0.Add(time.Second)) }},
		{name: "its alarm lifts it", run: func(a *actions) { a.liftHold(a.holdUntil(t0.Add(time.Hour))) }},
		{name: "an older alarm does not lift a newer hold", run: func(a *actions) {
			old := a.holdUntil(t0.Add(time.Hour))
			a.holdUntil(t0.Add(time.Hour))
			a.liftHold(old)
		}, wantHeld: true},
		{name: "the operator lifts it", run: func(a *actions) { a.holdUntil(t0.Add(time.Hour)); a.lift() }},
		{name: "a lifted hold's alarm lifts no later hold", run: func(a *actions) {
			old := a.holdUntil(t0.Add(time.Hour))
			a.lift()
			a.holdUntil(t0.Add(time.Hour))
			a.liftHold(old)
		}, wantHeld: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions(nil, nil)
			tc.run(a)
			if got := a.held(t0.Add(time.Second)); got != tc.wantHeld {
				t.Errorf("held = %v, want %v", got, tc.wantHeld)
			}
		})
	}
}

func TestActionsDMFailures(t *testing.T) {
	a := newActions([]engine.PendingAction{act("a1", "p1", "c1")}, nil)
	var got []time.Duration
	for range 7 {
		_, b := a.dmFailed("npc")
		got = append(got, b)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, dmBackoffMax, dmBackoffMax}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("backoffs = %v, want %v", got, want)
	}
	if n, _ := a.dmFailed("bookend"); n != 1 {
		t.Errorf("bookend failures = %d, want 1: each kind counts its own", n)
	}
	if !a.ready(act("a1", "p1", "c1")) || a.attempts["a1"] != 0 {
		t.Errorf("a DM failure counted against a player's action: attempts %v", a.attempts)
	}
	a.fail("a1", "boom")
	a.forgetDMFailures()
	if n, _ := a.dmFailed("npc"); n != 1 {
		t.Errorf("npc failures after forgetting = %d, want 1", n)
	}
	if a.attempts["a1"] != 1 {
		t.Errorf("forgetting the DM's failures forgot a player's: attempts %v", a.attempts)
	}
}

func TestActionsClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(a *actions)
		// wantRecent are p1's remembered client ids, newest first.
		wantRecent    string
		wantOpen      int
		wantDiscarded bool
	}{
		{name: "resolved is remembered", run: func(a *actions) { a.resolve("a1") },
			wantRecent: "[c1 old]", wantOpen: 1},
		{name: "abandoned while waiting", run: func(a *actions) { a.abandon("a1", false) },
			wantRecent: "[c1 old]", wantOpen: 1},
		{name: "abandoned while its turn runs", run: func(a *actions) { a.abandon("a1", true) },
			wantRecent: "[c1 old]", wantOpen: 1, wantDiscarded: true},
		{name: "left with the seat: not remembered", run: func(a *actions) { a.forget([]string{"a1"}) },
			wantRecent: "[old]", wantOpen: 1},
		{name: "the window keeps the newest", run: func(a *actions) {
			a.close("a1", store.ActionResolved)
			for i := range store.RecentActsPerPlayer + 2 {
				id := fmt.Sprintf("n%d", i)
				a.admit(act(id, "p1", fmt.Sprintf("k%d", i)))
				a.close(id, store.ActionResolved)
			}
		}, wantRecent: "[k9 k8 k7 k6 k5 k4 k3 k2]", wantOpen: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions([]engine.PendingAction{act("a1", "p1", "c1"), act("b1", "p2", "c1")},
				[]store.ClosedAct{{PlayerID: "p1", ClientID: "old", State: store.ActionResolved}})
			a.fail("a1", "boom")
			tc.run(a)
			var recent []string
			for _, c := range a.recent["p1"] {
				recent = append(recent, c.ClientID)
			}
			if got := fmt.Sprint(recent); got != tc.wantRecent {
				t.Errorf("recent = %s, want %s", got, tc.wantRecent)
			}
			if len(a.open) != tc.wantOpen {
				t.Errorf("open = %d, want %d", len(a.open), tc.wantOpen)
			}
			if _, ok := a.life["a1"]; ok {
				t.Error("a closed action keeps its life")
			}
			if got := a.discarded("a1"); got != tc.wantDiscarded {
				t.Errorf("discarded = %v, want %v", got, tc.wantDiscarded)
			}
			if a.discarded("a1") {
				t.Error("discarded twice")
			}
			if _, ok := a.recentAct("p2", "c1"); ok {
				t.Error("another player's open act is remembered as closed")
			}
		})
	}
}

func TestActionsStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(a *actions) store.ActionLife
		// want is the life started: state and attempts so far.
		want store.ActionLife
	}{
		{name: "an act", run: func(a *actions) store.ActionLife { a.admit(act("a1", "p1", "c1")); return a.start("a1") },
			want: store.ActionLife{ActionID: "a1", State: store.ActionRunning}},
		{name: "a session start gets its life as it starts", run: func(a *actions) store.ActionLife {
			a.admitStart(start("a1", "p1", "ch1"))
			if _, ok := a.life["a1"]; ok {
				t.Error("a queued session start has a life")
			}
			return a.start("a1")
		}, want: store.ActionLife{ActionID: "a1", State: store.ActionRunning}},
		{name: "a retry keeps its attempts and error", run: func(a *actions) store.ActionLife {
			a.admit(act("a1", "p1", "c1"))
			a.fail("a1", "boom")
			return a.start("a1")
		}, want: store.ActionLife{ActionID: "a1", State: store.ActionRunning, Attempts: 1, Error: "boom"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newActions(nil, nil)
			if got := tc.run(a); got != tc.want {
				t.Errorf("life = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestActionsRestore(t *testing.T) {
	a := newActions([]engine.PendingAction{act("a1", "p1", "c1"), act("a2", "p2", "c2")}, nil)
	a.restore(map[string]store.ActionLife{
		"a1":   {ActionID: "a1", State: store.ActionRunning, Attempts: 2},
		"a2":   {ActionID: "a2", State: store.ActionFailed, Attempts: 3, Error: "boom"},
		"gone": {ActionID: "gone", State: store.ActionPending},
	})
	if l := a.life["a1"]; l.State != store.ActionPending || l.Attempts != 2 {
		t.Errorf("a1 = %+v, want pending again with its attempts", l)
	}
	if l := a.life["a2"]; l.State != store.ActionFailed || l.Error != "boom" {
		t.Errorf("a2 = %+v, want failed with its error", l)
	}
	if _, ok := a.life["gone"]; ok {
		t.Error("a closed action's life came back")
	}
}
