package hub

import (
	"context"
	"encoding/json"
	"testing"

	"tavern/adventures"
	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// playedTurnMessages are the messages of a turn the offline narrator plays.
func playedTurnMessages(tb testing.TB) []agent.Message {
	tb.Helper()
	lib, err := adventures.Load()
	if err != nil {
		tb.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{Ruleset: engine.RulesetD100, CombatMode: engine.CombatTactical}, adv, lib.Catalogue, 11)
	d := engine.NewDice(11)
	for i, class := range []string{"warrior", "rogue", "mage", "cleric"} {
		seat := string(rune('1' + i))
		if _, err := st.AddCharacter(d, "c"+seat, seat, "p"+seat, engine.NewCharacterSpec{Name: "Hero" + seat, Class: class}); err != nil {
			tb.Fatal(err)
		}
	}
	r := &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}}
	res, err := r.Run(context.Background(), &agent.Turn{No: 3, Kind: agent.TurnPlayer, State: st, Dice: d, Actor: st.Party[0], Text: "I look around"})
	if err != nil {
		tb.Fatal(err)
	}
	return res.Messages
}

// TestAgentMessagesAreMarshal: the stored bodies of a turn's messages are
// what json.Marshal gives for each.
func TestAgentMessagesAreMarshal(t *testing.T) {
	msgs := playedTurnMessages(t)
	got := agentMessages("narrative", 3, msgs)
	for i, m := range msgs {
		want, _ := json.Marshal(m)
		if string(got[i].Body) != string(want) {
			t.Errorf("message %d: body %s, want %s", i, got[i].Body, want)
		}
		if got[i].Agent != "narrative" || got[i].Turn != 3 {
			t.Errorf("message %d: agent %q turn %d", i, got[i].Agent, got[i].Turn)
		}
	}
	if len(got) != len(msgs) || len(msgs) < 3 {
		t.Errorf("%d bodies for %d messages, want a turn of at least 3", len(got), len(msgs))
	}
}

// BenchmarkAgentMessages is the encoding of a turn's history messages for
// its commit, on the table goroutine.
func BenchmarkAgentMessages(b *testing.B) {
	msgs := playedTurnMessages(b)
	b.ReportAllocs()
	for b.Loop() {
		agentMessages("narrative", 3, msgs)
	}
}
