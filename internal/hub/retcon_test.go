package hub_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
)

// fightTable seats Ann's Aldric, walks him to the old mill and has him
// attack Snikket, and returns once the fight waits for a player: the
// table's id, Ann's socket, the state and last seq before the attack.
func fightTable(e *env) (id string, a *wsClient, before string, beforeSeq int64) {
	e.t.Helper()
	id = e.table(hub.TableSpec{})
	ann, atok := e.player("Ann")
	e.sit(id, ann, "Aldric", "warrior")
	a = e.dial(id, "player", atok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	a.act("m", "go to the old mill")
	a.event("narration")
	waitIdle(e, id)
	before, beforeSeq = e.stateJSON(id), lastSeq(e.t, e, id)
	if f := a.act("k", "attack Snikket"); f.Type != "ack" {
		e.t.Fatalf("act: %s", f.Raw)
	}
	a.event("combat_started")
	a.until("a player's turn", func(f frame) bool {
		return f.Type == "event" && f.Kind == "turn" && strings.HasPrefix(entryOf(f), "pc:")
	})
	waitIdle(e, id)
	return id, a, before, beforeSeq
}

// waitIdle waits until no turn runs at table id.
func waitIdle(e *env, id string) {
	e.t.Helper()
	for range 1000 {
		s, err := e.hub.Snapshot(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		if !s.Busy && len(s.Pending) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond) // a bound on the wait, not an assertion

	}
	e.t.Fatal("the table never went idle")
}

// events returns the stored events of table id after since.
func events(e *env, id string, since int64) []engine.Event {
	e.t.Helper()
	evs, err := e.store.Events(context.Background(), id, since, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// dice lists the dice events' data among evs, in order, as JSON.
func dice(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == engine.EventDice {
			b, _ := json.Marshal(ev.Data)
			out = append(out, string(b))
		}
	}
	return out
}

// Retcon with "retry": the turn's events are marked retracted by a
// `retcon` event, a fresh snapshot follows, and the action is played
// again from the same state and dice position, so it meets the same dice.
func TestRetconRetryMeetsTheSameDice(t *testing.T) {
	e := newEnv(t, 5)
	id, a, _, beforeSeq := fightTable(e)
	ctx := context.Background()
	owner, _ := e.player("Owner")
	ann, _ := e.player("Ann")
	first := events(e, id, beforeSeq)
	if len(dice(first)) == 0 {
		t.Fatal("the attack's turn rolled no dice")
	}

	if _, err := e.hub.Retcon(ctx, id, *ann, hub.RetconRetry); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("a player's retcon: %v, want forbidden", err)
	}
	if _, err := e.hub.Retcon(ctx, id, *owner, "maybe"); engine.ErrorCode(err) != engine.EINVALID {
		t.Errorf("then maybe: %v, want invalid", err)
	}
	res, err := e.hub.Retcon(ctx, id, *owner, hub.RetconRetry)
	if err != nil {
		t.Fatal(err)
	}
	if res.FromSeq <= beforeSeq+1 || res.ToSeq != first[len(first)-1].Seq {
		t.Errorf("retcon %+v; the attack's events are %d..%d (its action event first)", res, beforeSeq+1, first[len(first)-1].Seq)
	}
	rf := a.event("retcon")
	if d := dataOf(rf); int64(d["from_seq"].(float64)) != res.FromSeq || int64(d["to_seq"].(float64)) != res.ToSeq ||
		d["turn"] != res.Turn || d["by"] != owner.ID {
		t.Errorf("retcon event %s, result %+v", rf.Raw, res)
	}
	a.until("a fresh snapshot", func(f frame) bool { return f.Type == "snapshot" && f.Seq >= rf.Seq })
	a.until("the retried fight's player turn", func(f frame) bool {
		return f.Type == "event" && f.Seq > rf.Seq && f.Kind == "turn" && strings.HasPrefix(entryOf(f), "pc:")
	})
	waitIdle(e, id)
	again := events(e, id, rf.Seq)
	if got, want := dice(again), dice(first); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the retried turn rolled\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	narr := func(evs []engine.Event) string {
		for _, ev := range evs {
			if n, ok := ev.Data.(engine.NarrationData); ok {
				return n.Text
			}
		}
		return ""
	}
	if narr(again) != narr(first) || narr(first) == "" {
		t.Errorf("retried narration %q, first %q", narr(again), narr(first))
	}
}

// Retcon with "drop" after a restart (the same SQLite file reopened):
// the state is exactly what it was before the attack, the turn's history
// is gone, the player may act anew, and older turns can be undone one
// after another until there is none left (409).
func TestRetconDropAfterRestart(t *testing.T) {
	e := newEnv(t, 5)
	id, _, before, _ := fightTable(e)
	ctx := context.Background()
	owner, _ := e.player("Owner")
	e.shutdown()
	e.open()

	res, err := e.hub.Retcon(ctx, id, *owner, hub.RetconDrop)
	if err != nil {
		t.Fatal(err)
	}
	if got := e.stateJSON(id); got != before {
		t.Errorf("state after the retcon:\n%s\nwant\n%s", got, before)
	}
	turnNo, err := strconv.Atoi(strings.TrimPrefix(res.Turn, "t"))
	if err != nil {
		t.Fatalf("turn %q", res.Turn)
	}
	for _, agentName := range []string{engine.AgentNarrative, engine.AgentCombat} {
		for _, m := range e.history(id, agentName) {
			if m.Turn >= turnNo {
				t.Errorf("%s history keeps a message of turn %d: %s", agentName, m.Turn, m.Content)
			}
		}
	}
	s, err := e.hub.Snapshot(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Combat != nil || s.Mode != engine.ModeNarrative || len(s.Pending) != 0 {
		t.Errorf("after dropping the attack: combat %v, mode %s, pending %v", s.Combat, s.Mode, s.Pending)
	}
	if s.Undoable != 2 { // the arrival and the walk are left
		t.Errorf("undoable after one retcon: %d, want 2", s.Undoable)
	}
	_, atok := e.player("Ann")
	a := e.dial(id, "player", atok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	if f := a.act("l", "look around"); f.Type != "ack" {
		t.Fatalf("acting anew: %s", f.Raw)
	}
	a.event("narration")
	waitIdle(e, id)

	// Undo "look around", then the walk, then the arrival: three more.
	for i := range 3 {
		if _, err := e.hub.Retcon(ctx, id, *owner, hub.RetconDrop); err != nil {
			t.Fatalf("retcon %d: %v", i+2, err)
		}
	}
	if s, err := e.hub.Snapshot(ctx, id); err != nil || s.Undoable != 0 {
		t.Errorf("undoable with nothing left: %d (%v), want 0", s.Undoable, err)
	}
	if _, err := e.hub.Retcon(ctx, id, *owner, hub.RetconDrop); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("a retcon with nothing left to undo: %v, want conflict", err)
	}
}

// A retcon while a turn runs is refused with a conflict, and changes
// nothing: the turn then ends as it would have.
func TestRetconWhileATurnRuns(t *testing.T) {
	ctx := context.Background()
	gate := &gatedModel{started: make(chan struct{}, 1), release: make(chan struct{})}
	tv := openTavern(t, filepath.Join(t.TempDir(), "t.db"), &agent.Runner{Narrative: gate, Combat: gate}, restartable)
	defer tv.Close()
	owner := engine.Player{ID: "p-owner", Name: "Owner"}
	tb, err := tv.Hub.CreateTable(ctx, owner, hub.TableSpec{Name: "Busy"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tv.Hub.Sit(ctx, tb.ID, owner, engine.NewCharacterSpec{Name: "Wren"}); err != nil {
		t.Fatal(err)
	}
	<-gate.started // the arrival's turn runs
	if _, err := tv.Hub.Retcon(ctx, tb.ID, owner, hub.RetconDrop); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("a retcon while a turn runs: %v, want conflict", err)
	}
	close(gate.release)
	awaitArrival(t, tv.Hub, tb.ID, owner)
	if _, err := tv.Hub.Retcon(ctx, tb.ID, owner, hub.RetconDrop); err != nil {
		t.Errorf("the retcon once the turn ended: %v", err)
	}
}
