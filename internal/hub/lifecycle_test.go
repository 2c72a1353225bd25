package hub_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/internal/store"
)

// What the hub does and says when the DM keeps
// failing, and a retried act answered with the truth.

// flaky is the offline narrator that fails on purpose: every call for
// which fail holds returns an error (a model that is down).
type flaky struct {
	inner agent.Model
	mu    sync.Mutex
	fail  func(req agent.Request) bool
	calls atomic.Int64 // failed calls
}

func (f *flaky) Name() string { return "flaky" }

func (f *flaky) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && fail(req) {
		f.calls.Add(1)
		return agent.Response{}, errors.New("model down (on purpose)")
	}
	return f.inner.Complete(ctx, req)
}

func (f *flaky) set(fail func(req agent.Request) bool) {
	f.mu.Lock()
	f.fail = fail
	f.mu.Unlock()
}

// turnText is the text of the turn's user message (the player's action).
func turnText(req agent.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// failOn fails the turns whose action holds marker.
func failOn(marker string) func(agent.Request) bool {
	return func(req agent.Request) bool { return strings.Contains(turnText(req), marker) }
}

// testClock is the hub's AfterFunc: the turn timer (timerD) waits until
// the test fires it; the shutdown grace is real; every other wait (the
// backoff after a failure) passes a thousand times faster and is recorded.
type testClock struct {
	timerD time.Duration
	mu     sync.Mutex
	waits  []time.Duration
	timers []*heldTimer
	armed  chan struct{} // signalled when the timer is armed
}

// heldTimer is a turn timer waiting for the test to fire it.
type heldTimer struct {
	f       func()
	stopped atomic.Bool
}

func (h *heldTimer) Stop() bool { return !h.stopped.Swap(true) }

func newTestClock(timeoutS int) *testClock {
	return &testClock{timerD: time.Duration(timeoutS) * time.Second, armed: make(chan struct{}, 64)}
}

func (c *testClock) AfterFunc(d time.Duration, f func()) hub.Timer {
	switch {
	case c.timerD > 0 && d == c.timerD:
		h := &heldTimer{f: f}
		c.mu.Lock()
		c.timers = append(c.timers, h)
		c.mu.Unlock()
		select {
		case c.armed <- struct{}{}:
		default:
		}
		return h
	case d == testGrace:
		return time.AfterFunc(d, f)
	}
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	return time.AfterFunc(d/1000, f)
}

// backoffs returns the backoff waits asked for so far.
func (c *testClock) backoffs() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// forget drops the timers armed so far (stopped ones, say).
func (c *testClock) forget() {
	c.mu.Lock()
	c.timers = nil
	c.mu.Unlock()
	for {
		select {
		case <-c.armed:
		default:
			return
		}
	}
}

// fireNext waits until the turn timer is armed, then makes the newest one
// run out. A timer can be armed more than once for a turn (re-armed after
// a failure), so an arm signal is a hint to look again, not a count.
func (c *testClock) fireNext(t *testing.T) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		if n := len(c.timers); n > 0 {
			h := c.timers[n-1]
			c.timers = nil
			c.mu.Unlock()
			if !h.stopped.Swap(true) {
				go h.f() // as time.AfterFunc does
			}
			return
		}
		c.mu.Unlock()
		select {
		case <-c.armed:
		case <-deadline:
			t.Fatal("the turn timer was never armed")
		}
	}
}

// testGrace is the hub's ShutdownGrace here, told apart from backoffs.
const testGrace = 2500 * time.Millisecond

// newClockEnv is newEnv with the flaky model and the test clock.
// cursedTable is a clock env whose model fails on every turn that
// mentions "CURSED", with Ann (player) seated as Aldric and connected
// (ann), past her join snapshot.
type cursedTable struct {
	env     *env
	model   *flaky
	ann     *wsClient
	tableID string
	player  *engine.Player
}

func newCursedTable(t *testing.T, clk *testClock) cursedTable {
	t.Helper()
	e, model := newClockEnv(t, 5, clk)
	model.set(failOn("CURSED"))
	tid := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	return cursedTable{env: e, model: model, ann: a, tableID: tid, player: p}
}

func newClockEnv(t *testing.T, seed uint64, clk *testClock) (*env, *flaky) {
	t.Helper()
	model := &flaky{inner: offline.Narrator{}}
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tavern.db"), players: map[string]*engine.Player{}, model: model, seed: seed,
		tune: func(c *hub.Config) { c.AfterFunc, c.ShutdownGrace = clk.AfterFunc, testGrace }}
	e.serve()
	return e, model
}

func systemCode(code string) func(frame) bool {
	return func(f frame) bool { return f.Type == "event" && f.Kind == "system" && dataOf(f)["code"] == code }
}

func (e *env) actionLife(tid, playerID, clientID string) store.ActionLife {
	e.t.Helper()
	l, found, err := e.store.ActionByClientID(context.Background(), tid, playerID, clientID)
	if err != nil || !found {
		e.t.Fatalf("action %s: %v %v", clientID, found, err)
	}
	return l
}

// TestNewActAfterFailuresReplacesTheOld: the DM gives up on an action
// after its attempts; the player's new act is not silently swapped for a
// retry of the old one: the old one is abandoned with a `system` event
// naming it, the new one is acked, stored and played, and the narration
// carries the new action's id. The old act sent again is refused
// `abandoned`; the new one sent again is acked again.
func TestNewActAfterFailuresReplacesTheOld(t *testing.T) {
	clk := newTestClock(0)
	ct := newCursedTable(t, clk)
	e, model, a, tid, p := ct.env, ct.model, ct.ann, ct.tableID, ct.player

	if f := a.act("k1", "I read the CURSED scroll"); f.Type != "ack" {
		t.Fatalf("act k1: %+v", f)
	}
	old := a.event("action")
	oldID, _ := dataOf(old)["action_id"].(string)
	first := a.until("first failure", systemCode(hub.CodeUnavailable))
	gaveUp := a.until("give-up", systemCode(hub.CodeUnavailable))
	if n := dataOf(gaveUp)["attempts"]; n != float64(3) || !strings.Contains(dataOf(gaveUp)["message"].(string), "act anew") {
		t.Fatalf("the give-up event: %s (first %s)", gaveUp.Data, first.Data)
	}
	if got := e.actionLife(tid, p.ID, "k1"); got.State != store.ActionFailed || got.Attempts != 3 {
		t.Errorf("k1 after 3 failures: %+v", got)
	}
	if n := model.calls.Load(); n != 3 {
		t.Errorf("%d failed calls, want 3", n)
	}

	f := a.act("k2", "I light a torch")
	if f.Type != "ack" || f.Status != "accepted" {
		t.Fatalf("act k2: %+v", f)
	}
	ab := a.until("abandoned", systemCode(hub.CodeAbandoned))
	if d := dataOf(ab); d["action_id"] != oldID || !strings.Contains(d["message"].(string), "I read the CURSED scroll") {
		t.Errorf("abandoned event %s, want action %s named", ab.Data, oldID)
	}
	act := a.event("action")
	newID, _ := dataOf(act)["action_id"].(string)
	if dataOf(act)["text"] != "I light a torch" || newID == oldID || act.Seq != ab.Seq+1 {
		t.Fatalf("action event %s (seq %d, abandoned at %d)", act.Data, act.Seq, ab.Seq)
	}
	n := a.event("narration")
	if got := dataOf(n)["action_id"]; got != newID {
		t.Fatalf("narration resolves %v, want the new action %s", got, newID)
	}
	if got := e.actionLife(tid, p.ID, "k1"); got.State != store.ActionAbandoned {
		t.Errorf("k1: %+v", got)
	}
	if got := e.actionLife(tid, p.ID, "k2"); got.State != store.ActionResolved {
		t.Errorf("k2: %+v", got)
	}
	if f := a.act("k1", "I read the CURSED scroll"); f.Type != "error" || f.Code != hub.CodeAbandoned {
		t.Errorf("k1 again: %+v", f)
	}
	if f := a.act("k2", "I light a torch"); f.Type != "ack" || f.Status != "accepted" {
		t.Errorf("k2 again: %+v", f)
	}
	if n := model.calls.Load(); n != 3 {
		t.Errorf("%d failed calls, want 3: the old action was played again", n)
	}
	td, err := e.store.LoadTable(context.Background(), tid)
	if err != nil || len(td.Pending) != 0 {
		t.Fatalf("pending %+v %v", td.Pending, err)
	}
}

// TestSameActAgainRetriesTheFailedOne: sending the very act the DM gave up
// on plays it again (acked, and resolved once the model is back).
func TestSameActAgainRetriesTheFailedOne(t *testing.T) {
	clk := newTestClock(0)
	ct := newCursedTable(t, clk)
	e, model, a, tid, p := ct.env, ct.model, ct.ann, ct.tableID, ct.player
	if f := a.act("k1", "I read the CURSED scroll"); f.Type != "ack" {
		t.Fatalf("act: %+v", f)
	}
	id, _ := dataOf(a.event("action"))["action_id"].(string)
	a.until("first failure", systemCode(hub.CodeUnavailable))
	a.until("give-up", systemCode(hub.CodeUnavailable))
	model.set(nil) // the model is back
	if f := a.act("k1", "I read the CURSED scroll"); f.Type != "ack" {
		t.Fatalf("the same act again: %+v", f)
	}
	n := a.event("narration")
	if got := dataOf(n)["action_id"]; got != id {
		t.Fatalf("narration resolves %v, want %s", got, id)
	}
	if got := e.actionLife(tid, p.ID, "k1"); got.State != store.ActionResolved {
		t.Errorf("k1: %+v", got)
	}
}

// TestAbsentPlayersFailedActionDoesNotStallTheFight: in a tactical fight a
// player acts on their turn and goes away; the DM keeps failing on that
// action. After its attempts the turn timer runs (it did not before) and,
// when it runs out, the action is abandoned with a `system` event, the
// character defends and the fight goes on.
func TestAbsentPlayersFailedActionDoesNotStallTheFight(t *testing.T) {
	clk := newTestClock(45)
	e, model := newClockEnv(t, 11, clk)
	timeout := 45
	tid := e.table(hub.TableSpec{TurnTimeoutS: &timeout})
	p, tok := e.player("Ann")
	c := e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	s := e.dial(tid, "spectator", "", -1)
	a.act("m", "we go to the old mill")
	a.event("narration")
	a.act("k", "I attack Snikket")
	s.event("combat_started")
	mine := "pc:" + c.Seat
	s.until("Aldric's turn", func(f frame) bool { return f.Type == "event" && f.Kind == "turn" && entryOf(f) == mine })
	model.set(failOn("CURSED"))
	clk.forget()
	if f := a.act("k2", "I swing the CURSED axe"); f.Type != "ack" {
		t.Fatalf("act on my turn: %+v", f)
	}
	a.conn.CloseNow() // the player goes away
	act := s.until("the action", func(f frame) bool {
		return f.Type == "event" && f.Kind == "action" && dataOf(f)["text"] == "I swing the CURSED axe"
	})
	id, _ := dataOf(act)["action_id"].(string)
	s.until("first failure", systemCode(hub.CodeUnavailable))
	gaveUp := s.until("give-up", systemCode(hub.CodeUnavailable))
	if !strings.Contains(dataOf(gaveUp)["message"].(string), "the turn passes") {
		t.Errorf("give-up event does not say the turn will pass: %s", gaveUp.Data)
	}
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil || snap.Combat == nil || snap.Combat.Deadline == "" {
		t.Errorf("no deadline for the waiting turn: %+v %v", snap.Combat, err)
	}
	clk.fireNext(t)
	ab := s.until("abandoned", systemCode(hub.CodeAbandoned))
	if dataOf(ab)["action_id"] != id || !strings.Contains(dataOf(ab)["message"].(string), "CURSED axe") {
		t.Errorf("abandoned event %s, want %s", ab.Data, id)
	}
	s.until("turn timeout", systemCode("turn_timeout"))
	next := s.event("turn")
	if entryOf(next) == mine {
		t.Errorf("the turn did not pass: %s", next.Data)
	}
	if got := e.actionLife(tid, p.ID, "k2"); got.State != store.ActionAbandoned || got.Attempts != 3 {
		t.Errorf("k2: %+v", got)
	}
	for _, f := range s.events {
		if f.Kind == "narration" && dataOf(f)["action_id"] == id {
			t.Errorf("the failed action was narrated: %s", f.Data)
		}
	}
	// The fight goes on: the next time it is Aldric's turn, the timer is
	// armed again and the turn passes again.
	s.until("Aldric's next turn", func(f frame) bool { return f.Type == "event" && f.Kind == "turn" && entryOf(f) == mine })
	clk.fireNext(t)
	s.until("second turn timeout", systemCode("turn_timeout"))
}

// TestDMFailuresBackOffThenAbortTheFight: the combat model is down. The
// DM's turn is retried after 1 s, 2 s, 4 s, 8 s; the fifth failure ends the
// fight with error_abort. The table hears of it twice (the first failure,
// the abort), not once per attempt, and plays on in exploration.
func TestDMFailuresBackOffThenAbortTheFight(t *testing.T) {
	clk := newTestClock(0)
	e, model := newClockEnv(t, 11, clk)
	off := 0
	tid := e.table(hub.TableSpec{TurnTimeoutS: &off})
	p, tok := e.player("Ann")
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	s := e.dial(tid, "spectator", "", -1)
	a.act("m", "we go to the old mill")
	a.event("narration")
	model.set(func(req agent.Request) bool { return req.Agent == engine.AgentCombat })
	a.act("k", "I attack Snikket")
	started := s.event("combat_started")
	ended := s.event("combat_ended")
	if got := dataOf(ended)["outcome"]; got != string(engine.OutcomeErrorAbort) {
		t.Fatalf("outcome %v", got)
	}
	var told []frame
	for _, f := range s.events {
		if f.Kind == "system" && f.Seq > started.Seq && f.Seq < ended.Seq {
			told = append(told, f)
		}
	}
	if len(told) != 2 || dataOf(told[1])["outcome"] != string(engine.OutcomeErrorAbort) {
		t.Errorf("system events during the fight: %d, want 2 (the first failure, the abort)", len(told))
		for _, f := range told {
			t.Logf("#%d %s", f.Seq, f.Data)
		}
	}
	if n := model.calls.Load(); n != 5 {
		t.Errorf("%d failed DM calls, want 5", n)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	if got := clk.backoffs(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("backoffs %v, want %v", got, want)
	}
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil || snap.Mode != engine.ModeNarrative || snap.Combat != nil || snap.LastCombat == nil {
		t.Fatalf("after the abort: mode %s combat %+v %v", snap.Mode, snap.Combat, err)
	}
	// The table plays on (exploration uses the narrative model).
	if f := a.act("k3", "I catch my breath"); f.Type != "ack" {
		t.Fatalf("act after the abort: %+v", f)
	}
	a.until("narration after the abort", func(f frame) bool { return f.Type == "event" && f.Kind == "narration" && f.Seq > ended.Seq })
}

// TestRetryOfAppliedActIsAckedAgain: a client that lost its ack sends its
// act again after it was applied: it is acked again (not not_your_turn,
// busy or dead), and it is not applied twice, also after a restart of the
// hub on the same SQLite file.
func TestRetryOfAppliedActIsAckedAgain(t *testing.T) {
	clk := newTestClock(45)
	e, _ := newClockEnv(t, 11, clk)
	timeout := 45
	tid := e.table(hub.TableSpec{TurnTimeoutS: &timeout})
	pa, ta := e.player("Ann")
	pb, _ := e.player("Bob") // sits and never comes: his turns wait on the timer
	ca := e.sit(tid, pa, "Aldric", "warrior")
	cb := e.sit(tid, pb, "Brina", "cleric")
	a := e.dial(tid, "player", ta, -1)
	s := e.dial(tid, "spectator", "", -1)
	a.act("m", "we go to the old mill")
	a.event("narration")
	if f := a.act("k0", "I attack Snikket"); f.Type != "ack" {
		t.Fatalf("k0: %+v", f)
	}
	s.event("combat_started")
	mine, bobs := "pc:"+ca.Seat, "pc:"+cb.Seat
	acted := false
	for {
		f := s.until("a PC's turn", func(f frame) bool {
			return f.Type == "event" && f.Kind == "turn" && (entryOf(f) == mine || entryOf(f) == bobs)
		})
		if entryOf(f) == bobs {
			break
		}
		if f := a.act("k1", "I strike at the nearest goblin"); f.Type != "ack" {
			t.Fatalf("k1: %+v", f)
		}
		s.event("narration")
		acted = true
	}
	// Bob's turn waits (the timer is held): Ann's acts are long applied.
	answers := func(c *wsClient) {
		t.Helper()
		for _, id := range []string{"m", "k0"} {
			if f := c.act(id, "again"); f.Type != "ack" || f.Status != "accepted" {
				t.Errorf("%s again on Bob's turn: %+v", id, f)
			}
		}
		if acted {
			if f := c.act("k1", "again"); f.Type != "ack" || f.Status != "accepted" {
				t.Errorf("k1 again on Bob's turn: %+v", f)
			}
		}
		if f := c.act("k9", "a new act"); f.Type != "error" || f.Code != hub.CodeNotYourTurn {
			t.Errorf("a new act on Bob's turn: %+v", f)
		}
	}
	answers(a)
	seq := func() int64 {
		snap, err := e.hub.Snapshot(context.Background(), tid)
		if err != nil {
			t.Fatal(err)
		}
		return snap.Seq
	}
	before := seq()

	// Restart on the same file: the answers are the same.
	e.srv.CloseClientConnections()
	e.shutdown()
	e.open()
	a2 := e.dial(tid, "player", ta, -1)
	a2.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	answers(a2)
	if after := seq(); after != before {
		t.Errorf("re-sent acts committed events: seq %d → %d", before, after)
	}
}

// TestRetryWhileBusyIsAckedAgain: while the player's new action waits on a
// failing DM (busy for another act), their earlier, applied act sent again
// is acked, not refused busy.
func TestRetryWhileBusyIsAckedAgain(t *testing.T) {
	clk := newTestClock(0)
	e, model := newClockEnv(t, 5, clk)
	tid := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	if f := a.act("k1", "I look around"); f.Type != "ack" {
		t.Fatalf("k1: %+v", f)
	}
	a.event("narration")
	model.set(failOn("CURSED"))
	if f := a.act("k2", "I read the CURSED scroll"); f.Type != "ack" {
		t.Fatalf("k2: %+v", f)
	}
	a.until("first failure", systemCode(hub.CodeUnavailable))
	if f := a.act("k3", "I wait"); f.Type != "error" || f.Code != hub.CodeBusy {
		t.Errorf("a new act while k2 is retried: %+v", f)
	}
	if f := a.act("k1", "I look around"); f.Type != "ack" || f.Status != "accepted" {
		t.Errorf("k1 again while busy: %+v", f)
	}
	if f := a.act("k2", "I read the CURSED scroll"); f.Type != "ack" {
		t.Errorf("k2 again while it waits: %+v", f)
	}
}
