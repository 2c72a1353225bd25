package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tavern/internal/chart"
	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
	"tavern/internal/golden"
)

// analystCases are questions with the answer the seed makes true (see
// datasettest.Now); the golden file holds the SQL, chart and rows too.
var analystCases = []struct {
	name, question, shape, answer string
}{
	{"tables_played_most_this_week", "Which tables played most this week?", "top tables, players or adventures",
		"Greyhollow A played most this week, with 4 turns; next is Night Crypt with 4."},
	{"llm_cost_per_model_per_day", "What did the LLM cost per model per day?", "trend per day",
		"LLM cost totalled $0.36 over 5 days; the highest day was 2026-11-07 ($0.16)."},
	{"party_deaths_d20", "How often do parties die in the d20 ruleset?", "outcome rate",
		"Parties died in 2 of 5 fights (40%) in the d20 ruleset."},
	{"outcomes_per_ruleset", "Fight outcomes per ruleset?", "outcomes per ruleset",
		"Parties died in 0 of 1 d100 fights (0%) and 2 of 5 d20 fights (40%)."},
	{"tools_wrong_most", "Which tools does the model get wrong most?", "tool errors",
		"The model gets attack wrong most: 2 of 4 calls failed (50%)."},
	{"how_many_tables", "How many tables are there?", "count", "There are 3 tables."},
	{"how_many_players", "how many players?", "count", "There are 4 players."},
	{"turns_this_week", "How many turns were played this week?", "count", "There were 11 turns this week."},
	{"fights_fled", "How many fights did the party flee?", "outcome count", "Parties fled in 1 fight."},
	{"won_d100", "how many fights were won in d100", "outcome count", "Parties won in 1 fight in the d100 ruleset."},
	{"turns_per_day", "turns per day over the last 7 days", "trend per day",
		"Turns totalled 11 over 5 days in the last 7 days; the highest day was 2026-11-06 (3)."},
	{"turns_last_day", "turns per day over the last 1 day", "trend per day",
		"Turns totalled 3 in the last day, all on 2026-11-07."},
	{"cost_per_model", "Which model costs the most?", "LLM per model or agent",
		"gpt-4o has the most llm cost: $0.30 of $0.36."},
	{"latency_per_agent", "average latency per agent", "LLM per model or agent",
		"combat has the highest average latency: 8162 ms."},
	{"llm_total_this_week", "How much did the LLM cost this week?", "LLM totals",
		"The LLM cost $0.36 over 10 calls (19060 tokens, 2 failed) this week."},
	{"top_players", "top 3 players with most actions", "top tables, players or adventures",
		"Alice played most, with 6 actions; next is Cara with 4."},
	{"tool_use", "which tools are used most?", "tool use", "The model calls attack most: 4 calls."},
	{"unmapped", "Why is the sky blue?", "", ""},
}

func TestAnalyst(t *testing.T) {
	d, _ := mustOpen(t)
	a := &dataset.Analyst{Data: d, Now: func() time.Time { return datasettest.Now }}
	for _, tc := range analystCases {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := a.Ask(context.Background(), tc.question)
			if err != nil {
				t.Fatalf("Ask(%q): %v", tc.question, err)
			}
			if ans.Shape != tc.shape {
				t.Errorf("shape %q, want %q", ans.Shape, tc.shape)
			}
			if tc.shape == "" {
				if !strings.Contains(ans.Text, "I did not answer") || !strings.Contains(ans.Text, "how often do parties die") {
					t.Errorf("answer %q does not refuse with the shapes it takes", ans.Text)
				}
			} else if want := "I read this as " + ans.Reading + ". " + tc.answer; ans.Reading == "" || ans.Text != want {
				t.Errorf("answer\n got %q\nwant %q", ans.Text, want)
			}
			if ans.Chart != nil {
				if _, err := chart.Render(*ans.Chart, ans.Result.Columns, ans.Result.Rows); err != nil {
					t.Errorf("chart %+v does not draw the result: %v", ans.Chart, err)
				}
			}
			golden.Compare(t, filepath.Join("testdata", "analyst", tc.name+".golden"), []byte(render(ans)))
		})
	}
}

// render writes an answer as a reviewer reads it.
func render(a dataset.Answer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "question: %s\nshape: %s\nreading: %s\nanswer: %s\n", a.Question, a.Shape, a.Reading, a.Text)
	if a.SQL != "" {
		fmt.Fprintf(&b, "\n-- sql\n%s\n", a.SQL)
	}
	if a.Chart != nil {
		c, _ := json.Marshal(a.Chart)
		fmt.Fprintf(&b, "\n-- chart\n%s\n", c)
	}
	if a.Result != nil {
		fmt.Fprintf(&b, "\n-- result\n%s", a.Result.Text(50, 0))
	}
	return b.String()
}

// A "last N days" window is clamped to between one day and a century
// (AddDate wraps around long before an int does) and the answer says the
// window it used. The seed's 13 turns all fall in the century.
func TestAnalystDaysWindow(t *testing.T) {
	d, _ := mustOpen(t)
	a := &dataset.Analyst{Data: d, Now: func() time.Time { return datasettest.Now }}
	for _, tc := range []struct {
		name, question, answer string
	}{
		{"int64_max", "How many turns in the last 9223372036854775807 days?",
			"There were 13 turns in the last 36,500 days (the most I look back)."},
		{"beyond_int64", "How many turns in the last 99999999999999999999999 days?",
			"There were 13 turns in the last 36,500 days (the most I look back)."},
		{"just_over", "How many turns in the past 36501 days?",
			"There were 13 turns in the last 36,500 days (the most I look back)."},
		{"at_the_limit", "How many turns in the last 36500 days?",
			"There were 13 turns in the last 36,500 days."},
		{"ordinary", "How many turns in the last 2 days?",
			"There were 6 turns in the last 2 days."},
		{"one", "How many turns in the last 1 day?",
			"There were 3 turns in the last day."},
		{"zero", "How many turns in the last 0 days?",
			"There were 3 turns in the last day (the least I look back)."},
		{"negative", "How many turns in the last -5 days?",
			"There were 3 turns in the last day (the least I look back)."},
		{"hugely_negative", "How many turns in the last -9223372036854775808 days?",
			"There were 3 turns in the last day (the least I look back)."},
		{"beyond_negative", "How many turns in the last -99999999999999999999999 days?",
			"There were 3 turns in the last day (the least I look back)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := a.Ask(context.Background(), tc.question)
			if err != nil {
				t.Fatalf("Ask(%q): %v", tc.question, err)
			}
			if !strings.HasSuffix(ans.Text, ". "+tc.answer) {
				t.Errorf("answer\n got %q\nwant … %q", ans.Text, tc.answer)
			}
		})
	}
}
