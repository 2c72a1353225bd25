package db

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// A save point is written with its turn, the last store.MaxSavePoints are
// kept, and a retcon is one transaction: the state before the turn, the
// history since cut, the action reopened, the save point gone, and its
// event; or, when any of it fails, none of it.
func TestSavePointsAndRetcon(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := newState(t, engine.RulesetD100)
	mustCreateTable(t, d, "t1", st)
	seq := int64(0)
	states := map[int]*engine.State{}
	prev := st
	for turn := 1; turn <= 7; turn++ {
		before, err := json.Marshal(prev)
		if err != nil {
			t.Fatal(err)
		}
		next := prev.Clone()
		next.Game.Turn = turn
		next.World.Relationships[fmt.Sprintf("a|t%d", turn)] = turn
		seq++
		ev := engine.NewEvent(engine.NarrationData{Agent: engine.AgentNarrative, Text: fmt.Sprintf("turn %d", turn)})
		ev.Seq, ev.TS = seq, t0
		action := engine.PendingAction{ID: fmt.Sprintf("a%d", turn), PlayerID: "p1", ClientID: fmt.Sprintf("c%d", turn), Text: "act", CreatedAt: t0}
		if err := d.Commit(ctx, store.Commit{TableID: "t1", AddPending: &action}); err != nil {
			t.Fatal(err)
		}
		msg := store.AgentMessage{Agent: engine.AgentNarrative, Turn: turn, Body: json.RawMessage(`{"role":"user","content":"hi"}`)}
		c := store.Commit{TableID: "t1", State: next, Events: []engine.Event{ev}, Messages: []store.AgentMessage{msg}, Resolve: []string{action.ID},
			Owner: &store.OwnerChange{Save: &store.SavePoint{Turn: turn, Action: action, FromSeq: seq, State: before}}}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		states[turn-1] = prev
		prev = next
	}
	od, err := d.OwnerData(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(od.Points) != store.MaxSavePoints || od.Points[0].Turn != 3 || od.Points[4].Turn != 7 {
		t.Fatalf("save points %+v", od.Points)
	}

	// A retcon whose save point is not there fails whole: nothing of the
	// commit is written.
	bad := engine.NewEvent(engine.RetconData{Turn: "t1", FromSeq: 1, ToSeq: 7, By: "p1"})
	bad.Seq, bad.TS = 8, t0
	err = d.Commit(ctx, store.Commit{TableID: "t1", State: states[0], Events: []engine.Event{bad},
		Owner: &store.OwnerChange{Retcon: &store.Retcon{Turn: 1, ActionID: "a1", Reopen: true}}})
	if err == nil {
		t.Fatal("a retcon without its save point was applied")
	}
	td := mustLoad(t, d, "t1")
	assertSameState(t, td.State, prev)
	if td.Seq != 7 || len(td.Pending) != 0 {
		t.Fatalf("after the failed retcon: seq %d, pending %+v", td.Seq, td.Pending)
	}

	// Undo turn 7, then 6.
	for i, turn := range []int{7, 6} {
		var restored engine.State
		if err := json.Unmarshal(od.Points[4-i].State, &restored); err != nil {
			t.Fatal(err)
		}
		ev := engine.NewEvent(engine.RetconData{Turn: fmt.Sprintf("t%d", turn), FromSeq: int64(turn), ToSeq: 7, By: "p1"})
		ev.Seq, ev.TS = int64(8+i), t0
		if err := d.Commit(ctx, store.Commit{TableID: "t1", State: &restored, Events: []engine.Event{ev},
			Owner: &store.OwnerChange{Retcon: &store.Retcon{Turn: turn, ActionID: fmt.Sprintf("a%d", turn), Reopen: turn == 6}}}); err != nil {
			t.Fatal(err)
		}
	}
	td = mustLoad(t, d, "t1")
	assertSameState(t, td.State, states[5])
	if len(td.Pending) != 1 || td.Pending[0].ID != "a6" {
		t.Errorf("open actions after the retcons: %+v (want a6 reopened, a7 abandoned)", td.Pending)
	}
	if life, _, _ := d.ActionByClientID(ctx, "t1", "p1", "c7"); life.State != store.ActionAbandoned {
		t.Errorf("a7 is %q, want abandoned", life.State)
	}
	hist, err := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 5 || hist[len(hist)-1].Turn != 5 {
		t.Errorf("history after undoing turns 7 and 6: %d messages, last of turn %d", len(hist), hist[len(hist)-1].Turn)
	}
	od, _ = d.OwnerData(ctx, "t1")
	if len(od.Points) != 3 || od.Points[2].Turn != 5 {
		t.Errorf("save points after two retcons %+v", od.Points)
	}
}

// Notes, whispers (waiting until a turn reads them) and feedback (the
// last score counts).
func TestNotesWhispersFeedback(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := newState(t, engine.RulesetD100)
	mustCreateTable(t, d, "t1", st)
	n := store.Note{ID: "n1", Text: "It snows.", By: "p1", CreatedAt: t0}
	w := store.Whisper{Text: "Make it rain.", By: "p1", CreatedAt: t0}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddNote: &n}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddWhisper: &w}}); err != nil {
		t.Fatal(err)
	}
	if w.ID == 0 {
		t.Fatal("the whisper got no id")
	}
	od, err := d.OwnerData(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(od.Notes) != 1 || od.Notes[0] != n || len(od.Whispers) != 1 || od.Whispers[0].Text != w.Text {
		t.Fatalf("owner data %+v", od)
	}
	next := st.Clone()
	next.Game.Turn = 1
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: next, Owner: &store.OwnerChange{UseWhispers: []int64{w.ID}, RemoveNote: "n1"}}); err != nil {
		t.Fatal(err)
	}
	if od, _ = d.OwnerData(ctx, "t1"); len(od.Notes) != 0 || len(od.Whispers) != 0 {
		t.Fatalf("after the turn read the whisper and the note went: %+v", od)
	}
	// The call that made the narration, then a failed retry of it: the
	// score goes with the successful one.
	for _, c := range []store.LLMCall{{TableID: "t1", Turn: "t1", Agent: engine.AgentNarrative, Model: "m", Started: t0, PromptVersion: "v1"},
		{TableID: "t1", Turn: "t1", Agent: engine.AgentNarrative, Model: "m", Started: t0, PromptVersion: "v1", Error: "timeout"}} {
		if err := d.LogCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, score := range []int{1, -1} {
		if err := d.SetFeedback(ctx, store.Feedback{TableID: "t1", Seq: 3, PlayerID: "p1", Score: score, At: t0, Turn: "t1", Agent: engine.AgentNarrative}); err != nil {
			t.Fatal(err)
		}
	}
	gs, err := d.FeedbackGroups(ctx, t0.Add(-1))
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0] != (store.FeedbackGroup{Model: "m", PromptVersion: "v1", Up: 0, Down: 1}) {
		t.Errorf("feedback groups %+v", gs)
	}
}
