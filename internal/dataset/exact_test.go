package dataset_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
)

// phrasings are operators' questions with the shape that must answer
// them, or "" where the analyst must refuse: a question it cannot map
// exactly is never answered as another one.
var phrasings = []struct{ question, shape string }{
	// The four the offline analyst used to answer as other questions.
	{"top 5 players by XP", "XP leaders"},
	{"which class wins most fights?", "wins by class"},
	{"players online now", "online now"},
	{"Which players are online right now?", "online now"},
	// XP and level leaders.
	{"who has the most XP?", "XP leaders"},
	{"XP leaderboard", "XP leaders"},
	{"top 3 characters by experience", "XP leaders"},
	{"which characters reached the highest level?", "level leaders"},
	{"highest level characters", "level leaders"},
	// Wins by class.
	{"fights won per class", "wins by class"},
	{"which class wins the most battles in the d20 ruleset?", "wins by class"},
	// Online.
	{"who is connected?", "online now"},
	{"who is playing right now?", "online now"},
	// Turn latency.
	{"how long do players wait for the DM's answer?", "turn latency"},
	{"turn latency this week", "turn latency"},
	{"how long does a turn take?", "turn latency"},
	// Spend by table.
	{"which tables cost the most?", "spend by table"},
	{"LLM spend per table this week", "spend by table"},
	{"how much did each table cost?", "spend by table"},
	// The general shapes.
	{"Which tables played most this week?", "top tables, players or adventures"},
	{"top 3 players with most actions", "top tables, players or adventures"},
	{"most popular adventures", "top tables, players or adventures"},
	{"How many tables are there?", "count"},
	{"how many players?", "count"},
	{"number of fights today", "count"},
	{"how many dice rolls were made yesterday?", "count"},
	{"How often do parties die in the d20 ruleset?", "outcome rate"},
	{"what share of fights do parties win?", "outcome rate"},
	{"How many fights did the party flee?", "outcome count"},
	{"Fight outcomes per ruleset?", "outcomes per ruleset"},
	{"Which tools does the model get wrong most?", "tool errors"},
	{"which tools are used most?", "tool use"},
	{"What did the LLM cost per model per day?", "trend per day"},
	{"turns per day over the last 7 days", "trend per day"},
	{"Which model costs the most?", "LLM per model or agent"},
	{"average latency per agent", "LLM per model or agent"},
	{"How much did the LLM cost this week?", "LLM totals"},
	// Refused: each names something no shape reads.
	{"Why is the sky blue?", ""},
	{"top 5 players by gold", ""},
	{"which class dies most?", ""},
	{"how many players are banned?", ""},
	{"which weapon wins most fights?", ""},
	{"what is the average character age?", ""},
	{"how many tables have a private invite?", ""},
	{"top tables by feedback score", ""},
	{"which NPC killed the most players?", ""},
	{"how many players logged in from France?", ""},
	{"cost per player", ""},
	{"delete all tables", ""},
	{"", ""},
}

func TestPhrasings(t *testing.T) {
	d, _ := mustOpen(t)
	online := func(context.Context) ([]dataset.OnlinePlayer, error) {
		return []dataset.OnlinePlayer{{Player: "Alice", Table: "Greyhollow A", Role: "player"}}, nil
	}
	a := &dataset.Analyst{Data: d, Now: func() time.Time { return datasettest.Now }, Online: online}
	if len(phrasings) < 40 {
		t.Fatalf("%d phrasings, want at least 40", len(phrasings))
	}
	for _, tc := range phrasings {
		t.Run(tc.question, func(t *testing.T) {
			ans, err := a.Ask(context.Background(), tc.question)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Shape != tc.shape {
				t.Fatalf("answered as %q (%s), want %q", ans.Shape, ans.Text, tc.shape)
			}
			if tc.shape == "" {
				if !strings.HasPrefix(ans.Text, "I did not answer") || !strings.Contains(ans.Text, "top 5 characters by XP") {
					t.Errorf("refusal %q: want what it can answer", ans.Text)
				}
				return
			}
			if !strings.HasPrefix(ans.Text, "I read this as "+ans.Reading+". ") || ans.Reading == "" {
				t.Errorf("answer %q does not say how it read the question", ans.Text)
			}
		})
	}
	// Without the hub's live state, "who is online" is refused, not read
	// from the database as players ever made.
	a.Online = nil
	if ans, _ := a.Ask(context.Background(), "players online now"); ans.Shape != "" {
		t.Errorf("online without live state: answered as %q", ans.Shape)
	}
}
