package agent_test

import (
	"context"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/openai/openaitest"
)

// The budget notice is told by the first turn over budget that is
// committed: a turn that fails first keeps it due, and once the hub marks
// it told (Runner.Told) no later turn repeats it; a failed commit makes it
// due again.
func TestBudgetNoticeSurvivesAFailedTurn(t *testing.T) {
	st, d, actor := loneHero(t)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	b := &agent.Budget{Now: func() time.Time { return now }}
	b.SetTable("t1", 1)
	b.Add("t1", 2, now)
	fake := openaitest.New(t, func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call("respond", map[string]any{"narration": "Nothing stirs."})}}
	})
	offline := newFakeModel(t, fake)
	r := &agent.Runner{Narrative: offline, Offline: offline, Budget: b}
	ctx := agent.WithTable(context.Background(), "t1")
	turn := func() (agent.Result, error) {
		s := st.Clone()
		return r.Run(ctx, &agent.Turn{No: 1, Kind: agent.TurnPlayer, State: s, Dice: d, Actor: actor, Text: "I wait"})
	}
	notice := func(res agent.Result) bool {
		return len(res.Events) > 0 && res.Events[0].Kind == engine.EventSystem
	}

	fake.Push(openaitest.Reply{Status: 400, Error: "bad request"})
	if _, err := turn(); err == nil {
		t.Fatal("the first turn succeeded; want it to fail")
	}
	res, err := turn()
	if err != nil {
		t.Fatal(err)
	}
	if !notice(res) {
		t.Fatalf("the turn after a failed one: events %v, want the budget notice first", res.Events)
	}
	r.Told("t1", res, false) // its commit failed
	if res, err = turn(); err != nil || !notice(res) {
		t.Fatalf("after a failed commit: %v %v, want the notice again", res.Events, err)
	}
	r.Told("t1", res, true)
	if res, err = turn(); err != nil || notice(res) {
		t.Errorf("once told: %v %v, want no second notice", res.Events, err)
	}
}
