package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// NotesStore is a Store with the owner's words to the table: notes,
// whispers, feedback, narration edits and retcons (store.OwnerChange).
type NotesStore interface {
	Store
	OwnerData(ctx context.Context, tableID string) (store.OwnerData, error)
	SetFeedback(ctx context.Context, f store.Feedback) error
	FeedbackGroups(ctx context.Context, since time.Time) ([]store.FeedbackGroup, error)
	LogCall(ctx context.Context, c store.LLMCall) error
}

// RunNotes runs the contract of notes, whispers, feedback, edits and
// retcons; open returns a new, empty store for one test.
func RunNotes(t *testing.T, open func(t *testing.T) NotesStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s NotesStore)
	}{
		{"SavePointsAndRetcon", testSavePointsAndRetcon},
		{"NotesWhispersFeedback", testNotesWhispersFeedback},
		{"EditNarration", testEditNarration},
		{"EditRetracted", testEditRetracted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

// A save point is written with its turn, the last store.MaxSavePoints are
// kept, and a retcon is one transaction: the state before the turn, the
// history and memories since cut, the action reopened or abandoned, the
// whispers its turns read waiting again, the save points gone, and its
// event; or, when any of it fails, none of it.
func testSavePointsAndRetcon(t *testing.T, s NotesStore) {
	st := fightingState(t)
	st.Game.Turn = 0
	createTable(t, s, "t1", st)
	seq := int64(0)
	states := map[int]*engine.State{}
	prev := st
	wh := store.Whisper{Text: "Make it rain.", By: "p1", CreatedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddWhisper: &wh}}); err != nil {
		t.Fatal(err)
	}
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
		ev.Seq, ev.TS = seq, at
		action := engine.PendingAction{ID: fmt.Sprintf("a%d", turn), PlayerID: "p1", ClientID: fmt.Sprintf("c%d", turn), Text: "act", CreatedAt: at}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: &action}); err != nil {
			t.Fatal(err)
		}
		msg := store.AgentMessage{Agent: engine.AgentNarrative, Turn: turn, Body: message("user", "hi")}
		own := &store.OwnerChange{Save: &store.SavePoint{Turn: turn, Action: action, FromSeq: seq, State: before}}
		if turn == 6 {
			own.UseWhispers = []int64{wh.ID}
		}
		c := store.Commit{TableID: "t1", State: next, Events: []engine.Event{ev}, Messages: []store.AgentMessage{msg}, Resolve: []string{action.ID}, Owner: own}
		if turn == 7 {
			// Turn 7 archives turns up to 6 into a memory: undoing it
			// makes them active again.
			c.Archive = &store.Memory{Agent: engine.AgentNarrative, LastTurn: 6, Title: "Six turns", Summary: "s", Source: "test", CreatedAt: at}
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		states[turn-1] = prev
		prev = next
	}
	od, err := s.OwnerData(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(od.Points) != store.MaxSavePoints || od.Points[0].Turn != 3 || od.Points[4].Turn != 7 {
		t.Fatalf("save points of turns %v", turns(od.Points))
	}
	if od.Points[4].Action.ID != "a7" || od.Points[4].FromSeq != 7 || len(od.Whispers) != 0 {
		t.Fatalf("save point of turn 7: action %+v, from seq %d; whispers %+v", od.Points[4].Action, od.Points[4].FromSeq, od.Whispers)
	}
	// The whisper turn 6 read, which a retcon can still undo, comes with
	// its turn.
	if read := wh; len(od.Read) != 1 || od.Read[0].ID != read.ID || od.Read[0].UsedTurn != 6 || od.Read[0].Text != read.Text {
		t.Fatalf("whispers read by undoable turns: %+v", od.Read)
	}
	if h, _ := s.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0); len(h) != 1 {
		t.Fatalf("active history before the retcons: %d messages, want 1", len(h))
	}

	// A retcon whose save point is not there fails whole: nothing of the
	// commit is written.
	bad := engine.NewEvent(engine.RetconData{Turn: "t1", FromSeq: 1, ToSeq: 7, By: "p1"})
	bad.Seq, bad.TS = 8, at
	err = s.Commit(ctx, store.Commit{TableID: "t1", State: states[0], Events: []engine.Event{bad},
		Owner: &store.OwnerChange{Retcon: &store.Retcon{Turn: 1, ActionID: "a1", Reopen: true}}})
	if err == nil {
		t.Fatal("a retcon without its save point was applied")
	}
	td := load(t, s, "t1")
	sameState(t, td.State, prev)
	if td.Seq != 7 || len(td.Pending) != 0 {
		t.Fatalf("after the failed retcon: seq %d, pending %+v", td.Seq, td.Pending)
	}

	// Undo turn 7 (abandoning its action), then 6 (reopening it).
	for i, turn := range []int{7, 6} {
		var restored engine.State
		if err := json.Unmarshal(od.Points[4-i].State, &restored); err != nil {
			t.Fatal(err)
		}
		ev := engine.NewEvent(engine.RetconData{Turn: fmt.Sprintf("t%d", turn), FromSeq: int64(turn), ToSeq: 7, By: "p1"})
		ev.Seq, ev.TS = int64(8+i), at
		if err := s.Commit(ctx, store.Commit{TableID: "t1", State: &restored, Events: []engine.Event{ev},
			Owner: &store.OwnerChange{Retcon: &store.Retcon{Turn: turn, ActionID: fmt.Sprintf("a%d", turn), Reopen: turn == 6}}}); err != nil {
			t.Fatal(err)
		}
	}
	td = load(t, s, "t1")
	sameState(t, td.State, states[5])
	if td.Seq != 9 || len(td.Pending) != 1 || td.Pending[0].ID != "a6" {
		t.Errorf("after the retcons: seq %d, open actions %+v (want a6 reopened, a7 abandoned)", td.Seq, td.Pending)
	}
	if life, _, _ := s.ActionByClientID(ctx, "t1", "p1", "c7"); life.State != store.ActionAbandoned {
		t.Errorf("a7 is %q, want abandoned", life.State)
	}
	hist, err := s.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 5 || hist[len(hist)-1].Turn != 5 {
		t.Errorf("history after undoing turns 7 and 6: %d messages, last of turn %d", len(hist), hist[len(hist)-1].Turn)
	}
	if ms, _ := s.Memories(ctx, "t1", engine.AgentNarrative, 10); len(ms) != 0 {
		t.Errorf("memories after undoing the turn that made them: %+v", ms)
	}
	od, _ = s.OwnerData(ctx, "t1")
	if len(od.Points) != 3 || od.Points[2].Turn != 5 {
		t.Errorf("save points after two retcons: turns %v", turns(od.Points))
	}
	if len(od.Whispers) != 1 || od.Whispers[0].ID != wh.ID || od.Whispers[0].UsedTurn != 0 || len(od.Read) != 0 {
		t.Errorf("whispers after undoing the turn that read it: %+v, read %+v", od.Whispers, od.Read)
	}
}

// Notes, whispers (waiting until a turn reads them) and feedback (the
// last score counts, grouped by the model call that made the narration).
func testNotesWhispersFeedback(t *testing.T, s NotesStore) {
	st := fightingState(t)
	createTable(t, s, "t1", st)
	n := store.Note{ID: "n1", Text: "It snows.", By: "p1", ByName: "Ann", CreatedAt: at}
	n2 := store.Note{ID: "n2", Text: "Maren lies.", By: "p2", ByName: "Bo", CreatedAt: at.Add(time.Second)}
	w := store.Whisper{Text: "Make it rain.", By: "p1", CreatedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddNote: &n}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddNote: &n2, AddWhisper: &w}}); err != nil {
		t.Fatal(err)
	}
	if w.ID == 0 {
		t.Fatal("the whisper got no id")
	}
	// A note id taken fails the commit; a table that is not there is
	// ENOTFOUND.
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{AddNote: &n}}); err == nil {
		t.Error("a second note n1 was stored")
	}
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Owner: &store.OwnerChange{AddNote: &n}}), engine.ENOTFOUND)
	od, err := s.OwnerData(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(od.Notes) != 2 || od.Notes[0] != n || od.Notes[1] != n2 || len(od.Whispers) != 1 || od.Whispers[0] != w {
		t.Fatalf("owner data %+v", od)
	}
	next := st.Clone()
	next.Game.Turn = 8
	if err := s.Commit(ctx, store.Commit{TableID: "t1", State: next, Owner: &store.OwnerChange{UseWhispers: []int64{w.ID}, RemoveNote: "n1"}}); err != nil {
		t.Fatal(err)
	}
	if od, _ = s.OwnerData(ctx, "t1"); len(od.Notes) != 1 || od.Notes[0].ID != "n2" || len(od.Whispers) != 0 {
		t.Fatalf("after the turn read the whisper and note n1 went: %+v", od)
	}
	// The call that made the narration, then a failed retry of it: the
	// score goes with the successful one.
	for _, c := range []store.LLMCall{{TableID: "t1", Turn: "t1", Agent: engine.AgentNarrative, Model: "m", Started: at, PromptVersion: "v1"},
		{TableID: "t1", Turn: "t1", Agent: engine.AgentNarrative, Model: "m", Started: at, PromptVersion: "v1", Error: "timeout"}} {
		if err := s.LogCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if cs, err := s.Calls(ctx, "t1", 10); err != nil || len(cs) != 2 || cs[0].PromptVersion != "v1" {
		t.Fatalf("calls %+v, %v", cs, err)
	}
	for _, score := range []int{1, -1} {
		if err := s.SetFeedback(ctx, store.Feedback{TableID: "t1", Seq: 3, PlayerID: "p1", Score: score, At: at, Turn: "t1", Agent: engine.AgentNarrative}); err != nil {
			t.Fatal(err)
		}
	}
	// A score of a narration no logged call made counts under no model.
	if err := s.SetFeedback(ctx, store.Feedback{TableID: "t1", Seq: 4, PlayerID: "p2", Score: 1, At: at, Turn: "t2", Agent: engine.AgentNarrative}); err != nil {
		t.Fatal(err)
	}
	gs, err := s.FeedbackGroups(ctx, at.Add(-1))
	if err != nil {
		t.Fatal(err)
	}
	want := []store.FeedbackGroup{{Up: 1}, {Model: "m", PromptVersion: "v1", Down: 1}}
	if len(gs) != 2 || gs[0] != want[0] || gs[1] != want[1] {
		t.Errorf("feedback groups %+v, want %+v", gs, want)
	}
	if gs, _ := s.FeedbackGroups(ctx, at.Add(time.Second)); len(gs) != 0 {
		t.Errorf("feedback groups after the scores: %+v", gs)
	}
}

// An edit replaces one message of a turn, by its place in the turn; a body
// that is not JSON is EINVALID and writes nothing.
func testEditNarration(t *testing.T, s NotesStore) {
	createTable(t, s, "t1", fightingState(t))
	msgs := []store.AgentMessage{
		{Agent: engine.AgentNarrative, Turn: 8, Body: message("user", "look")},
		{Agent: engine.AgentNarrative, Turn: 8, Body: message("assistant", "You see a mill.")},
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	fixed := message("assistant", "You see a burnt mill.")
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Owner: &store.OwnerChange{Edit: &store.HistoryEdit{Agent: engine.AgentNarrative, Turn: 8, Index: 1, Body: fixed}}}); err != nil {
		t.Fatal(err)
	}
	bad := store.Commit{TableID: "t1", Events: chat(1, 1), Owner: &store.OwnerChange{Edit: &store.HistoryEdit{Agent: engine.AgentNarrative, Turn: 8, Index: 0, Body: json.RawMessage("{")}}}
	wantCode(t, s.Commit(ctx, bad), engine.EINVALID)
	h, err := s.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || string(h[0].Body) != string(msgs[0].Body) || string(h[1].Body) != string(fixed) {
		t.Errorf("history after the edit: %+v", h)
	}
	if evs, _ := s.Events(ctx, "t1", 0, 10); len(evs) != 0 {
		t.Errorf("the failed edit wrote %d events", len(evs))
	}
}

// An edit of a narration a retcon retracted fails with ECONFLICT and
// writes nothing, though its turn's number has a live message again; an
// edit whose message is not there fails with ENOTFOUND; an edit of a
// narration after the retcon lands.
func testEditRetracted(t *testing.T, s NotesStore) {
	createTable(t, s, "t1", fightingState(t))
	turn8 := func(seq int64, text string) store.Commit {
		ev := engine.NarrationEvent(engine.AgentNarrative, text, nil, "")
		ev.Seq, ev.TS, ev.Turn = seq, at, "t8"
		return store.Commit{TableID: "t1", Events: []engine.Event{ev}, Messages: []store.AgentMessage{
			{Agent: engine.AgentNarrative, Turn: 8, Body: message("assistant", text)}}}
	}
	if err := s.Commit(ctx, turn8(1, "You see a mill.")); err != nil {
		t.Fatal(err)
	}
	// The retcon of turn 8 (its save point and history cut are another
	// test's), then turn 8 played again.
	undo := engine.NewEvent(engine.RetconData{Turn: "t8", FromSeq: 1, ToSeq: 1, By: "p1"})
	undo.Seq, undo.TS, undo.Turn = 2, at, "t8"
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: []engine.Event{undo}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, turn8(3, "You see a windmill.")); err != nil {
		t.Fatal(err)
	}
	edit := func(seq int64, index int, text string) store.Commit {
		ev := engine.NewEvent(engine.EditData{Seq: seq, Text: text, By: "p1"})
		ev.Seq, ev.TS, ev.Turn = 4, at, "t8"
		return store.Commit{TableID: "t1", Events: []engine.Event{ev}, Owner: &store.OwnerChange{EditOf: seq,
			Edit: &store.HistoryEdit{Agent: engine.AgentNarrative, Turn: 8, Index: index, Body: message("assistant", text)}}}
	}
	wantCode(t, s.Commit(ctx, edit(1, 1, "You see a burnt mill.")), engine.ECONFLICT)
	wantCode(t, s.Commit(ctx, edit(3, 5, "You see a burnt windmill.")), engine.ENOTFOUND)
	if evs, _ := s.Events(ctx, "t1", 3, 10); len(evs) != 0 {
		t.Errorf("the failed edits wrote %d events", len(evs))
	}
	if err := s.Commit(ctx, edit(3, 1, "You see a burnt windmill.")); err != nil {
		t.Fatalf("edit of the live narration: %v", err)
	}
	h, err := s.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{string(message("assistant", "You see a mill.")), string(message("assistant", "You see a burnt windmill."))}
	if len(h) != 2 || string(h[0].Body) != want[0] || string(h[1].Body) != want[1] {
		t.Errorf("history after the edits: %+v", h)
	}
}

func turns(ps []store.SavePoint) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.Turn)
	}
	return out
}
