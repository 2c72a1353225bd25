package hub_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	llmtest "tavern/internal/openai/openaitest"
)

// Notes and the owner's whisper reach the model in the turn's user
// message (through the OpenAI-compatible fake server), never in the system
// prompt, which stays byte-identical; the whisper is read by one turn only
// and reaches no player or spectator frame.
func TestNotesAndWhisperInTheUserMessage(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 11, fake)
	tid, a, s := seatedTable(e, fake)
	ctx := context.Background()
	_, otok := e.player("Owner")
	ann, _ := e.player("Ann")
	const note = "The innkeeper is called Bram."
	const secret = "Let the cellar door creak open by itself."
	if _, err := e.hub.AddNote(ctx, tid, *ann, note); err != nil {
		t.Fatal(err)
	}
	o := e.dial(tid, "spectator", otok, -1)
	o.send(map[string]string{"type": "whisper", "id": "w1", "text": secret})
	if f := o.until("whisper answer", func(f frame) bool { return f.ID == "w1" }); f.Type != "ack" {
		t.Fatalf("whisper: %s", f.Raw)
	}
	base := len(fake.Requests())
	fake.Push(respond("The cellar door creaks."), respond("You rest."))
	a.act("a1", "I listen at the cellar door")
	a.event("narration")
	a.act("a2", "I rest")
	a.until("second narration", func(f frame) bool {
		return f.Type == "event" && f.Kind == "narration" && f.Seq > 0 && dataOf(f)["text"] == "You rest."
	})

	reqs := fake.Requests()[base:]
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		user := r.Messages[len(r.Messages)-1]
		if user.Role != "user" || !strings.Contains(user.Content, note) {
			t.Errorf("request %d: the note is not in the turn's user message: %q", i+1, user.Content)
		}
		if strings.Contains(r.System, note) || strings.Contains(r.System, secret) {
			t.Errorf("request %d: a note or whisper is in the system prompt", i+1)
		}
		if r.Prefix() != fake.Requests()[0].Prefix() {
			t.Errorf("request %d: the cacheable prefix changed", i+1)
		}
	}
	if u := reqs[0].Messages[len(reqs[0].Messages)-1].Content; !strings.Contains(u, secret) || !strings.Contains(u, "<owner_whisper>") {
		t.Errorf("the whisper is not in the next turn's user message: %q", u)
	}
	if u := reqs[1].Messages[len(reqs[1].Messages)-1].Content; strings.Contains(u, "<owner_whisper>") {
		t.Errorf("the whisper came back on a later turn: %q", u)
	}
	for _, c := range []*wsClient{a, s} {
		drain(c)
		for _, f := range append(c.backlog, c.events...) {
			if strings.Contains(string(f.Raw), secret) {
				t.Errorf("%s got the whisper: %s", c.name, f.Raw)
			}
		}
	}
}

// drain reads what a client has received so far into its backlog.
func drain(c *wsClient) {
	for {
		select {
		case f, ok := <-c.frames:
			if !ok {
				return
			}
			if f.Type == "event" {
				c.events = append(c.events, f)
			}
			c.backlog = append(c.backlog, f)
		case <-time.After(200 * time.Millisecond):
			return
		}
	}
}

// The owner corrects a narration: clients get an `edit` event and the
// agent's history holds the corrected text; a player's score is stored
// with the call that made the narration, by model and prompt version.
func TestEditAndFeedback(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 11, fake)
	tid, a, _ := seatedTable(e, fake)
	ctx := context.Background()
	owner, _ := e.player("Owner")
	ann, _ := e.player("Ann")
	fake.Push(respond("The goblin grins."))
	a.act("a1", "I wave")
	n := a.event("narration")

	if _, err := e.hub.EditNarration(ctx, tid, *ann, n.Seq, "x"); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("a player's edit: %v, want forbidden", err)
	}
	if _, err := e.hub.EditNarration(ctx, tid, *owner, n.Seq-1, "x"); engine.ErrorCode(err) != engine.EINVALID {
		t.Errorf("editing a non-narration: %v, want invalid", err)
	}
	if _, err := e.hub.EditNarration(ctx, tid, *owner, n.Seq+1000, "x"); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("editing no event: %v, want not found", err)
	}
	if _, err := e.hub.EditNarration(ctx, tid, *owner, n.Seq, "The hobgoblin grins."); err != nil {
		t.Fatal(err)
	}
	ed := a.event("edit")
	if d := dataOf(ed); d["text"] != "The hobgoblin grins." || int64(d["seq"].(float64)) != n.Seq || d["by"] != owner.ID {
		t.Errorf("edit event %s", ed.Raw)
	}
	hist := e.history(tid, engine.AgentNarrative)
	found := false
	for _, m := range hist {
		for _, c := range m.ToolCalls {
			if strings.Contains(c.Function.Arguments, "The goblin grins.") {
				t.Errorf("the history still holds the old narration: %s", c.Function.Arguments)
			}
			found = found || strings.Contains(c.Function.Arguments, "The hobgoblin grins.")
		}
	}
	if !found {
		t.Error("the history does not hold the corrected narration")
	}

	if err := e.hub.Feedback(ctx, tid, *owner, n.Seq, 1, ""); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("feedback by the unseated owner: %v, want forbidden", err)
	}
	if err := e.hub.Feedback(ctx, tid, *ann, n.Seq, 2, ""); engine.ErrorCode(err) != engine.EINVALID {
		t.Errorf("score 2: %v, want invalid", err)
	}
	if err := e.hub.Feedback(ctx, tid, *ann, n.Seq, 1, "nice"); err != nil {
		t.Fatal(err)
	}
	if err := e.hub.Feedback(ctx, tid, *ann, n.Seq, -1, "too short"); err != nil { // the last one counts
		t.Fatal(err)
	}
	groups, err := e.hub.FeedbackGroups(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || groups[0].Model != "fake-gm" || groups[0].PromptVersion != agent.PromptVersion(engine.AgentNarrative) ||
		groups[0].Up != 0 || groups[0].Down != 1 {
		t.Errorf("feedback groups %+v", groups)
	}
}
