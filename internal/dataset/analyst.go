package dataset

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"tavern/internal/chart"
)

// Analyst answers the common shapes of operator questions without a model
// (the offline analyst, as the offline narrator plays without one):
// it recognises the shape by keywords, runs real SQL over the curated
// views through [Dataset.Query] (so it is held to the same checks as a
// model) and words a one-sentence answer from the rows. A question it
// cannot map gets an Answer with an empty Shape that lists what it can
// take. Safe for concurrent use if Data is.
type Analyst struct {
	Data *Dataset
	// Now is the clock for "today", "this week"… (default time.Now).
	Now func() time.Time
	// Online, if set, lists the players connected right now (the hub's
	// live state); without it "who is online" is refused.
	Online func(ctx context.Context) ([]OnlinePlayer, error)
}

// Answer is what the analyst (or, later, the data agent) made of one
// question.
type Answer struct {
	Question string `json:"question"`
	// Shape names the question shape that matched; "" if none did.
	Shape string `json:"shape"`
	// SQL is the statement that ran ("" if none).
	SQL    string      `json:"sql,omitempty"`
	Result *Result     `json:"result,omitempty"`
	Chart  *chart.Spec `json:"chart,omitempty"`
	// Reading is the question the analyst answered, in words ("the number
	// of tables created this week"); Text starts with it.
	Reading string `json:"reading,omitempty"`
	// Text is the answer in one sentence, computed from Result.
	Text string `json:"answer"`
}

// Shapes lists the question shapes the analyst takes, with an example
// each, as the operator (or a prompt) should read them.
func Shapes() []string {
	out := make([]string, len(shapes))
	for i, s := range shapes {
		out[i] = s.name + ": " + s.example
	}
	return out
}

// Ask answers question. It returns an error only if a query failed (which
// is a bug in the analyst's SQL or the database being unavailable); a
// question it cannot map is answered with the list of shapes it takes.
func (a *Analyst) Ask(ctx context.Context, question string) (Answer, error) {
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	q := parse(question, now().UTC())
	var unread []string
	for _, s := range shapes {
		if !s.match(q) || (s.live && a.Online == nil) {
			continue
		}
		// Exact mapping (exact.go): a shape that would leave a word
		// unread is not the question asked.
		if u := unknown(q, s.words); len(u) > 0 {
			if unread == nil {
				unread = u
			}
			continue
		}
		p := s.plan(q)
		var r *Result
		var err error
		if s.live {
			r, err = a.online(ctx)
		} else {
			r, err = a.Data.Query(ctx, p.sql)
		}
		if err != nil {
			return Answer{}, fmt.Errorf("analyst %s: %w", s.name, err)
		}
		reading := s.read(q)
		return Answer{Question: question, Shape: s.name, SQL: r.SQL, Result: r, Chart: &p.chart, Reading: reading,
			Text: "I read this as " + reading + ". " + p.say(r)}, nil
	}
	return Answer{Question: question, Text: refusal(unread)}, nil
}

func examples() []string {
	out := make([]string, len(shapes))
	for i, s := range shapes {
		out[i] = s.example
	}
	return out
}

// plan is what a shape makes of a question.
type plan struct {
	sql   string
	chart chart.Spec
	say   func(r *Result) string
}

type shape struct {
	name, example string
	match         func(q question) bool
	plan          func(q question) plan
	// words are the words the shape reads (exact.go); read says, in
	// words, the question it answers.
	words map[string]bool
	read  func(q question) string
	// live shapes read the server's live state (Analyst.Online), not
	// the views.
	live bool
}

// Words of the shapes.
var (
	dieWords   = []string{"die", "died", "dies", "death", "dead", "wipe", "tpk", "killed"}
	fleeWords  = []string{"flee", "fled", "flees", "flight", "run", "ran", "escape", "escaped"}
	winWords   = []string{"win", "won", "wins", "victory", "victories", "victorious"}
	rateWords  = []string{"often", "rate", "percent", "percentage", "share", "chance", "likely", "frequently", "proportion", "odds"}
	wrongWords = []string{"wrong", "fail", "failed", "failing", "error", "mistake", "refused", "bad", "invalid", "broken"}
	costWords  = []string{"cost", "spend", "spent", "money", "dollar", "usd", "price", "bill"}
	llmWords   = append([]string{"token", "latency", "slow", "slowest", "llm", "model"}, costWords...)
	mostWords  = []string{"most", "top", "busiest", "active", "popular", "biggest", "more"}
	trendWords = []string{"per day", "daily", "each day", "by day", "a day", "over time", "trend", "day by day"}
)

var baseShapes = []shape{
	{
		name: "tool errors", example: "which tools does the model get wrong most?",
		words: vocab("tool model dm agent most often call calls make use", wrongWords),
		read: func(q question) string {
			return fmt.Sprintf("the tools whose calls failed most%s, the top %d", q.scope(false), q.n)
		},
		match: func(q question) bool { return q.has("tool") && q.has(wrongWords...) },
		plan: func(q question) plan {
			return plan{
				sql: "SELECT tool, count(*) AS calls, sum(failed) AS failed, round(100.0 * sum(failed) / count(*), 1) AS failed_pct\nFROM v_tool_calls" +
					q.where("created_at", "") + fmt.Sprintf("\nGROUP BY tool HAVING sum(failed) > 0\nORDER BY failed DESC, failed_pct DESC, tool\nLIMIT %d", q.n),
				chart: chart.Spec{Type: chart.Bar, X: "tool", Y: []string{"failed"}, Title: "Failed tool calls per tool" + q.scope(false)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No tool call failed" + q.scope(false) + "."
					}
					row := r.Rows[0]
					return fmt.Sprintf("The model gets %s wrong most%s: %s of %s calls failed (%s%%).", row[0], q.scope(false), num(row[2]), num(row[1]), num(row[3]))
				},
			}
		},
	},
	{
		name: "tool use", example: "which tools are used most?",
		words: vocab("tool model dm agent most often used use call calls popular frequently"),
		read: func(q question) string {
			return fmt.Sprintf("the tools the model calls most%s, the top %d", q.scope(false), q.n)
		},
		match: func(q question) bool { return q.has("tool") },
		plan: func(q question) plan {
			return plan{
				sql: "SELECT tool, count(*) AS calls, sum(failed) AS failed\nFROM v_tool_calls" + q.where("created_at", "") +
					fmt.Sprintf("\nGROUP BY tool\nORDER BY calls DESC, tool\nLIMIT %d", q.n),
				chart: chart.Spec{Type: chart.Bar, X: "tool", Y: []string{"calls"}, Title: "Tool calls per tool" + q.scope(false)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "The model made no tool call" + q.scope(false) + "."
					}
					return fmt.Sprintf("The model calls %s most%s: %s calls.", r.Rows[0][0], q.scope(false), num(r.Rows[0][1]))
				},
			}
		},
	},
	{
		name: "outcomes per ruleset", example: "what are the fight outcomes per ruleset?",
		words: vocab("outcome result fight combat battle party end ended", dieWords, fleeWords, winWords),
		read: func(q question) string {
			return "how the fights ended, per ruleset" + q.scope(false)
		},
		match: func(q question) bool {
			return q.has("ruleset") && q.ruleset == "" && q.has(append(append(append([]string{"outcome", "result", "fight", "combat"}, dieWords...), fleeWords...), winWords...)...)
		},
		plan: func(q question) plan {
			return plan{
				sql: "SELECT ruleset, " + outcomeWords + " AS outcome, count(*) AS fights\nFROM v_combats" + q.where("ended_at", "") +
					"\nGROUP BY ruleset, outcome\nORDER BY ruleset, fights DESC, outcome",
				chart: chart.Spec{Type: chart.Bar, X: "ruleset", Y: []string{"fights"}, Group: "outcome", Title: "Fight outcomes per ruleset" + q.scope(false)},
				say: func(r *Result) string {
					type tally struct{ all, died int64 }
					var order []string
					per := map[string]*tally{}
					for _, row := range r.Rows {
						rs := fmt.Sprint(row[0])
						if per[rs] == nil {
							per[rs] = &tally{}
							order = append(order, rs)
						}
						n, _ := row[2].(int64)
						per[rs].all += n
						if row[1] == outcomeLabel["player_die"] {
							per[rs].died += n
						}
					}
					if len(order) == 0 {
						return "No fight ended" + q.scope(false) + "."
					}
					parts := make([]string, len(order))
					for i, rs := range order {
						parts[i] = fmt.Sprintf("%d of %d %s fights (%s)", per[rs].died, per[rs].all, rs, pct(per[rs].died, per[rs].all))
					}
					return "Parties died in " + join(parts) + q.scope(false) + "."
				},
			}
		},
	},
	{
		name: "outcome rate", example: "how often do parties die in the d20 ruleset?",
		words: vocab("outcome result fight combat battle party player group end ended usually", rateWords, dieWords, fleeWords, winWords),
		read: func(q question) string {
			focus, _ := outcomeOf(q)
			if focus == "" {
				return "how the fights ended, as shares" + q.scope(true)
			}
			return "the share of fights that ended with “" + outcomeLabel[focus] + "”" + q.scope(true)
		},
		match: func(q question) bool {
			return q.has("outcome") || (q.has(rateWords...) && q.has(append(append(dieWords, fleeWords...), winWords...)...))
		},
		plan: func(q question) plan {
			focus, verb := outcomeOf(q)
			return plan{
				sql: "SELECT " + outcomeWords + " AS outcome, count(*) AS fights, round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS pct\nFROM v_combats" +
					q.where("ended_at", "ruleset") + "\nGROUP BY outcome\nORDER BY fights DESC, outcome",
				chart: chart.Spec{Type: chart.Pie, X: "outcome", Y: []string{"fights"}, Title: "Fight outcomes" + q.scope(true)},
				say: func(r *Result) string {
					var all, hit int64
					for _, row := range r.Rows {
						n, _ := row[1].(int64)
						all += n
						if row[0] == outcomeLabel[focus] {
							hit += n
						}
					}
					if all == 0 {
						return "No fight ended" + q.scope(true) + "."
					}
					if focus == "" {
						return fmt.Sprintf("The most common outcome%s is %s: %s of %d fights (%s%%).", q.scope(true), r.Rows[0][0], num(r.Rows[0][1]), all, num(r.Rows[0][2]))
					}
					return fmt.Sprintf("Parties %s in %d of %d fights (%s)%s.", verb, hit, all, pct(hit, all), q.scope(true))
				},
			}
		},
	},
	{
		name: "outcome count", example: "how many fights did parties win (die, flee) this week?",
		words: vocab("fight combat battle party player group end ended outcome result", dieWords, fleeWords, winWords),
		read: func(q question) string {
			focus, _ := outcomeOf(q)
			return "the number of fights that ended with “" + outcomeLabel[focus] + "”" + q.scope(true)
		},
		match: func(q question) bool {
			return q.has(append(append(dieWords, fleeWords...), winWords...)...)
		},
		plan: func(q question) plan {
			focus, verb := outcomeOf(q)
			return plan{
				sql:   "SELECT count(*) AS fights\nFROM v_combats" + and(q.where("ended_at", "ruleset"), fmt.Sprintf("outcome = '%s'", focus)),
				chart: chart.Spec{Type: chart.Table, Title: "Fights the party " + verb + q.scope(true)},
				say: func(r *Result) string {
					n := num(r.Rows[0][0])
					noun := "fights"
					if n == "1" {
						noun = "fight"
					}
					return fmt.Sprintf("Parties %s in %s %s%s.", verb, n, noun, q.scope(true))
				},
			}
		},
	},
	{
		name: "trend per day", example: "what did the LLM cost per model per day?",
		words: vocab("daily trend played new average total", trendWords, llmWords, "error fail failed failure death fight combat battle call request player signup table action turn tool agent", dieWords),
		read: func(q question) string {
			m := measureOf(q)
			s := strings.ToLower(m.title) + " per day"
			if q.has("agent") && (m.view == "v_llm_calls" || m.view == "v_tool_calls" || m.view == "v_turns") {
				s += " per agent"
			} else if m.view == "v_llm_calls" && q.has("model") {
				s += " per model"
			}
			return s + q.scope(true)
		},
		match: func(q question) bool { return q.phrase(trendWords...) },
		plan: func(q question) plan {
			m := measureOf(q)
			group := ""
			if m.view == "v_llm_calls" && q.has("model") && !q.phrase("per day per agent") {
				group = "model"
			}
			if q.has("agent") && (m.view == "v_llm_calls" || m.view == "v_tool_calls" || m.view == "v_turns") {
				group = "agent"
			}
			cols := "day"
			if group != "" {
				cols += ", " + group
			}
			title := m.title + " per day"
			if group != "" {
				title += " per " + group
			}
			return plan{
				sql: fmt.Sprintf("SELECT %s, %s AS %s\nFROM %s", cols, m.expr, m.col, m.view) + q.where(m.timeCol, m.rulesetCol) +
					fmt.Sprintf("\nGROUP BY %s\nORDER BY %s", cols, cols),
				chart: chart.Spec{Type: chart.Line, X: "day", Y: []string{m.col}, Group: group, Title: title + q.scope(true)},
				say: func(r *Result) string {
					y := len(r.Columns) - 1
					var total float64
					days := map[string]float64{}
					var order []string
					for _, row := range r.Rows {
						d := fmt.Sprint(row[0])
						if _, ok := days[d]; !ok {
							order = append(order, d)
						}
						v := toFloat(row[y])
						days[d] += v
						total += v
					}
					if len(order) == 0 {
						return "There is no data for " + strings.ToLower(m.title) + q.scope(true) + "."
					}
					peak := order[0]
					for _, d := range order {
						if days[d] > days[peak] {
							peak = d
						}
					}
					if m.average {
						return fmt.Sprintf("%s was highest on %s (%s)%s.", m.title, peak, m.format(days[peak]), q.scope(true))
					}
					if len(order) == 1 {
						return fmt.Sprintf("%s totalled %s%s, all on %s.", m.title, m.format(total), q.scope(true), peak)
					}
					return fmt.Sprintf("%s totalled %s over %d days%s; the highest day was %s (%s).", m.title, m.format(total), len(order), q.scope(true), peak, m.format(days[peak]))
				},
			}
		},
	},
	{
		name: "LLM per model or agent", example: "which model costs the most? (also tokens, latency, errors per model or agent)",
		words: vocab(llmWords, "agent most highest costs expensive average call error fail failed used least"),
		read: func(q question) string {
			m := measureOf(q)
			if m.view != "v_llm_calls" {
				m = measures["calls"]
			}
			dim := "model"
			if q.has("agent") {
				dim = "agent"
			}
			return strings.ToLower(m.title) + " per " + dim + q.scope(false)
		},
		match: func(q question) bool {
			return q.has(llmWords...) && (q.has("model") || q.has("agent")) && !q.has("table")
		},
		plan: func(q question) plan {
			m := measureOf(q)
			if m.view != "v_llm_calls" {
				m = measures["calls"]
			}
			dim := "model"
			if q.has("agent") {
				dim = "agent"
			}
			return plan{
				sql: fmt.Sprintf("SELECT %s, %s AS %s, count(*) AS calls\nFROM v_llm_calls", dim, m.expr, m.col) + q.where("started_at", "") +
					fmt.Sprintf("\nGROUP BY %s\nORDER BY %s DESC, %s", dim, m.col, dim),
				chart: chart.Spec{Type: chart.Bar, X: dim, Y: []string{m.col}, Title: m.title + " per " + dim + q.scope(false)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No model call was logged" + q.scope(false) + "."
					}
					if m.average {
						return fmt.Sprintf("%s has the highest %s%s: %s.", r.Rows[0][0], strings.ToLower(m.title), q.scope(false), m.format(toFloat(r.Rows[0][1])))
					}
					var total float64
					for _, row := range r.Rows {
						total += toFloat(row[1])
					}
					return fmt.Sprintf("%s has the most %s%s: %s of %s.", r.Rows[0][0], strings.ToLower(m.title), q.scope(false), m.format(toFloat(r.Rows[0][1])), m.format(total))
				},
			}
		},
	},
	{
		name: "top tables, players or adventures", example: "which tables played most this week? (or players, adventures; top 5 …)",
		words: vocab(mostWords, "table player adventure played play action turn sent game"),
		read: func(q question) string {
			switch {
			case q.has("player"):
				return fmt.Sprintf("the top %d players by actions sent%s", q.n, q.scope(false))
			case q.has("adventure"):
				return fmt.Sprintf("the top %d adventures by turns played%s", q.n, q.scope(true))
			}
			return fmt.Sprintf("the top %d tables by turns played%s", q.n, q.scope(true))
		},
		match: func(q question) bool {
			return q.has(mostWords...) && (q.has("table") || q.has("player") || q.has("adventure"))
		},
		plan: func(q question) plan {
			var sql, x, y, noun string
			switch {
			case q.has("player"):
				sql = "SELECT coalesce(p.name, a.player_id) AS player, count(*) AS actions\nFROM v_pending_actions a LEFT JOIN v_players p ON p.player_id = a.player_id" +
					and(q.where("a.created_at", ""), "a.kind = 'act'") +
					fmt.Sprintf("\nGROUP BY a.player_id, p.name\nORDER BY actions DESC, player\nLIMIT %d", q.n)
				x, y, noun = "player", "actions", "actions"
			case q.has("adventure"):
				sql = "SELECT t.adventure, count(*) AS turns\nFROM v_turns u JOIN v_tables t ON t.table_id = u.table_id" + q.where("u.ts", "t.ruleset") +
					fmt.Sprintf("\nGROUP BY t.adventure\nORDER BY turns DESC, t.adventure\nLIMIT %d", q.n)
				x, y, noun = "adventure", "turns", "turns"
			default:
				sql = "SELECT t.name AS table_name, count(*) AS turns\nFROM v_turns u JOIN v_tables t ON t.table_id = u.table_id" + q.where("u.ts", "t.ruleset") +
					fmt.Sprintf("\nGROUP BY u.table_id, t.name\nORDER BY turns DESC, table_name\nLIMIT %d", q.n)
				x, y, noun = "table_name", "turns", "turns"
			}
			return plan{
				sql:   sql,
				chart: chart.Spec{Type: chart.Bar, X: x, Y: []string{y}, Title: "Most " + noun + " per " + strings.TrimSuffix(x, "_name") + q.scope(true)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "Nothing was played" + q.scope(true) + "."
					}
					s := fmt.Sprintf("%s played most%s, with %s %s", r.Rows[0][0], q.scope(true), num(r.Rows[0][1]), noun)
					if len(r.Rows) > 1 {
						s += fmt.Sprintf("; next is %s with %s", r.Rows[1][0], num(r.Rows[1][1]))
					}
					return s + "."
				},
			}
		},
	},
	{
		name: "count", example: "how many tables (players, turns, fights, characters, model calls, tool calls, dice rolls, actions) were there this week?",
		words: vocab("total played created made taken registered new exist existed tool model llm call dice roll turn fight combat battle encounter character hero pc player seat table game campaign action event request"),
		read: func(q question) string {
			e, _ := countOf(q)
			return "the number of " + e.noun + q.scope(true)
		},
		match: func(q question) bool {
			_, ok := countOf(q)
			return ok && (q.phrase("how many", "number of", "count", "total number") || len(q.words) <= 3)
		},
		plan: func(q question) plan {
			e, _ := countOf(q)
			where := q.where(e.timeCol, e.rulesetCol)
			if e.filter != "" {
				where = and(where, e.filter)
			}
			return plan{
				sql:   "SELECT count(*) AS total\nFROM " + e.view + where,
				chart: chart.Spec{Type: chart.Table, Title: "Number of " + e.noun + q.scope(true)},
				say: func(r *Result) string {
					n, verb, noun := num(r.Rows[0][0]), "are", e.noun
					if n == "1" {
						verb, noun = "is", strings.TrimSuffix(noun, "s")
					}
					if q.window.label != "" {
						verb = map[string]string{"are": "were", "is": "was"}[verb]
					}
					return fmt.Sprintf("There %s %s %s%s.", verb, n, noun, q.scope(true))
				},
			}
		},
	},
	{
		name: "LLM totals", example: "how much did the LLM cost this week?",
		words: vocab(llmWords, "total overall spent spend all calls"),
		read: func(q question) string {
			return "the LLM's total cost, calls, tokens and failed calls" + q.scope(false)
		},
		match: func(q question) bool { return q.has(llmWords...) },
		plan: func(q question) plan {
			return plan{
				sql: "SELECT round(sum(cost_usd), 4) AS cost_usd, count(*) AS calls, sum(total_tokens) AS tokens, sum(1 - ok) AS errors\nFROM v_llm_calls" +
					q.where("started_at", ""),
				chart: chart.Spec{Type: chart.Table, Title: "LLM totals" + q.scope(false)},
				say: func(r *Result) string {
					row := r.Rows[0]
					return fmt.Sprintf("The LLM cost %s over %s calls (%s tokens, %s failed)%s.", usd(toFloat(row[0])), num(row[1]), num(orZero(row[2])), num(orZero(row[3])), q.scope(false))
				},
			}
		},
	},
}

// outcomeOf returns the fight outcome a question is about and the verb
// for it; "" when it names none.
func outcomeOf(q question) (string, string) {
	switch {
	case q.has(dieWords...):
		return "player_die", "died"
	case q.has(fleeWords...):
		return "player_flee", "fled"
	case q.has(winWords...):
		return "player_win", "won"
	}
	return "", ""
}

// measure is a quantity per day or per group.
type measure struct {
	view, timeCol, rulesetCol string
	expr, col, title          string
	average                   bool
	format                    func(float64) string
}

var measures = map[string]measure{
	"cost":    {view: "v_llm_calls", timeCol: "started_at", expr: "round(sum(cost_usd), 4)", col: "cost_usd", title: "LLM cost", format: usd},
	"tokens":  {view: "v_llm_calls", timeCol: "started_at", expr: "sum(total_tokens)", col: "tokens", title: "Tokens", format: count},
	"latency": {view: "v_llm_calls", timeCol: "started_at", expr: "CAST(avg(latency_ms) AS INTEGER)", col: "avg_latency_ms", title: "Average latency", average: true, format: ms},
	"errors":  {view: "v_llm_calls", timeCol: "started_at", expr: "sum(1 - ok)", col: "errors", title: "Failed model calls", format: count},
	"calls":   {view: "v_llm_calls", timeCol: "started_at", expr: "count(*)", col: "calls", title: "Model calls", format: count},
	"turns":   {view: "v_turns", timeCol: "ts", expr: "count(*)", col: "turns", title: "Turns", format: count},
	"fights":  {view: "v_combats", timeCol: "ended_at", rulesetCol: "ruleset", expr: "count(*)", col: "fights", title: "Fights", format: count},
	"deaths":  {view: "v_combats", timeCol: "ended_at", rulesetCol: "ruleset", expr: "sum(party_died)", col: "party_deaths", title: "Party deaths", format: count},
	"players": {view: "v_players", timeCol: "created_at", expr: "count(*)", col: "new_players", title: "New players", format: count},
	"tables":  {view: "v_tables", timeCol: "created_at", expr: "count(*)", col: "new_tables", title: "New tables", format: count},
	"actions": {view: "v_pending_actions", timeCol: "created_at", expr: "count(*)", col: "actions", title: "Player actions", format: count},
	"tools":   {view: "v_tool_calls", timeCol: "created_at", expr: "count(*)", col: "tool_calls", title: "Tool calls", format: count},
}

// measureOf picks what a trend or per-group question measures; turns if
// it names nothing known.
func measureOf(q question) measure {
	switch {
	case q.has(costWords...):
		return measures["cost"]
	case q.has("token"):
		return measures["tokens"]
	case q.has("latency", "slow", "fast", "speed"):
		return measures["latency"]
	case q.has("error", "fail", "failure", "failed") && !q.has("tool"):
		return measures["errors"]
	case q.has(dieWords...):
		return measures["deaths"]
	case q.has("fight", "combat", "battle"):
		return measures["fights"]
	case q.has("call", "llm", "model", "request"):
		return measures["calls"]
	case q.has("player", "signup"):
		return measures["players"]
	case q.has("table"):
		return measures["tables"]
	case q.has("action"):
		return measures["actions"]
	}
	return measures["turns"]
}

// counted is something "how many" can count.
type counted struct {
	words                     []string
	phrase                    string
	view, timeCol, rulesetCol string
	filter, noun              string
}

// countables, most specific first.
var countables = []counted{
	{phrase: "tool call", view: "v_tool_calls", timeCol: "created_at", noun: "tool calls"},
	{phrase: "model call", view: "v_llm_calls", timeCol: "started_at", noun: "model calls"},
	{phrase: "llm call", view: "v_llm_calls", timeCol: "started_at", noun: "model calls"},
	{phrase: "dice roll", view: "v_events", timeCol: "ts", filter: "kind = 'dice'", noun: "dice rolls"},
	{words: []string{"roll"}, view: "v_events", timeCol: "ts", filter: "kind = 'dice'", noun: "dice rolls"},
	{words: []string{"turn"}, view: "v_turns", timeCol: "ts", noun: "turns"},
	{words: []string{"fight", "combat", "battle", "encounter"}, view: "v_combats", timeCol: "ended_at", rulesetCol: "ruleset", noun: "fights"},
	{words: []string{"character", "hero", "pc"}, view: "v_characters", noun: "characters"},
	{words: []string{"player"}, view: "v_players", timeCol: "created_at", noun: "players"},
	{words: []string{"seat"}, view: "v_seats", timeCol: "joined_at", noun: "taken seats"},
	{words: []string{"table", "game", "campaign"}, view: "v_tables", timeCol: "created_at", rulesetCol: "ruleset", noun: "tables"},
	{words: []string{"action"}, view: "v_pending_actions", timeCol: "created_at", filter: "kind = 'act'", noun: "player actions"},
	{words: []string{"event"}, view: "v_events", timeCol: "ts", noun: "events"},
	{words: []string{"call", "request"}, view: "v_llm_calls", timeCol: "started_at", noun: "model calls"},
}

func countOf(q question) (counted, bool) {
	for _, c := range countables {
		if (c.phrase != "" && (q.phrase(c.phrase) || q.phrase(c.phrase+"s"))) || (len(c.words) > 0 && q.has(c.words...)) {
			if c.timeCol == "" && !q.window.since.IsZero() {
				continue // Cannot be filtered by time; a later entry may.
			}
			return c, true
		}
	}
	return counted{}, false
}

// and adds cond to a WHERE clause made by question.where.
func and(where, cond string) string {
	if where == "" {
		return "\nWHERE " + cond
	}
	return where + " AND " + cond
}

func join(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func pct(n, of int64) string {
	if of == 0 {
		return "0%"
	}
	return strconv.FormatFloat(math.Round(float64(n)*1000/float64(of))/10, 'f', -1, 64) + "%"
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return 0
}

func orZero(v any) any {
	if v == nil {
		return int64(0)
	}
	return v
}

func num(v any) string { return cell(v) }

func usd(v float64) string {
	if v != 0 && v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func count(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func ms(v float64) string { return fmt.Sprintf("%.0f ms", v) }
