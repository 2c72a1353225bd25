package dataset

import (
	"context"
	"fmt"
	"strings"

	"tavern/internal/chart"
)

// shapes are the question shapes, the most specific first: the
// operators' common questions (XP and level leaders, wins by class, who
// is online, turn latency, spend by table), then the general ones.
var shapes = append(append([]shape{}, moreShapes...), baseShapes...)

// OnlinePlayer is a player connected right now, as Analyst.Online lists
// them.
type OnlinePlayer struct {
	Player, Table, Role string
}

// outcomeLabel words a fight's outcome for the operator.
var outcomeLabel = map[string]string{
	"player_win": "party won", "player_flee": "party fled", "player_die": "party died",
	"npc_flee": "foes fled", "forced_end": "ended by the round limit", "error_abort": "aborted by an error",
}

// outcomeWords is the SQL that words v_combats.outcome as outcomeLabel.
var outcomeWords = func() string {
	var b strings.Builder
	b.WriteString("CASE outcome")
	for _, k := range []string{"player_win", "player_flee", "player_die", "npc_flee", "forced_end", "error_abort"} {
		fmt.Fprintf(&b, " WHEN '%s' THEN '%s'", k, outcomeLabel[k])
	}
	b.WriteString(" ELSE outcome END")
	return b.String()
}()

var (
	leaderWords = "top most highest best leader leaderboard rank ranking ranked who has have character hero player point by order sorted"
	classWords  = "class win won victory victorious fight combat battle most best which party count often"
	onlineWords = "online now right connected currently who player playing logged moment sitting spectator spectating"
	waitWords   = "turn latency wait waiting waited long slow fast quick average typical median p95 percentile take took answer respond response reply action player dm second"
	spendWords  = "cost costs costly spend spent spends money dollar usd price bill expensive table which most per llm model"
)

var moreShapes = []shape{
	{
		name: "XP leaders", example: "top 5 characters by XP", words: vocab(leaderWords, "xp experience"),
		match: func(q question) bool { return q.has("xp", "experience") },
		read:  func(q question) string { return fmt.Sprintf("the top %d characters by XP", q.n) },
		plan: func(q question) plan {
			return plan{
				sql: "SELECT c.name AS character, coalesce(p.name, c.player_id) AS player, c.class, c.level, c.xp\nFROM v_characters c LEFT JOIN v_players p ON p.player_id = c.player_id" +
					fmt.Sprintf("\nORDER BY c.xp DESC, c.level DESC, character\nLIMIT %d", q.n),
				chart: chart.Spec{Type: chart.Bar, X: "character", Y: []string{"xp"}, Title: "XP per character"},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No character has been made yet."
					}
					return fmt.Sprintf("%s (played by %s) leads with %s XP.", r.Rows[0][0], r.Rows[0][1], num(r.Rows[0][4]))
				},
			}
		},
	},
	{
		name: "level leaders", example: "which characters reached the highest level?", words: vocab(leaderWords, "level reached reach max maximum"),
		match: func(q question) bool { return q.has("level") },
		read:  func(q question) string { return fmt.Sprintf("the top %d characters by level", q.n) },
		plan: func(q question) plan {
			return plan{
				sql: "SELECT c.name AS character, coalesce(p.name, c.player_id) AS player, c.class, c.level, c.xp\nFROM v_characters c LEFT JOIN v_players p ON p.player_id = c.player_id" +
					fmt.Sprintf("\nORDER BY c.level DESC, c.xp DESC, character\nLIMIT %d", q.n),
				chart: chart.Spec{Type: chart.Bar, X: "character", Y: []string{"level"}, Title: "Level per character"},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No character has been made yet."
					}
					return fmt.Sprintf("%s (played by %s) is highest, at level %s.", r.Rows[0][0], r.Rows[0][1], num(r.Rows[0][3]))
				},
			}
		},
	},
	{
		name: "wins by class", example: "which class wins most fights?", words: vocab(classWords),
		match: func(q question) bool {
			return q.has("class") && q.has(append([]string{"fight", "combat", "battle"}, winWords...)...)
		},
		read: func(q question) string {
			return "the fights won per character class" + q.scope(true) + " (a won fight counts once for each class in the party)"
		},
		plan: func(q question) plan {
			return plan{
				sql: "SELECT c.class, count(DISTINCT f.table_id || '/' || f.combat_id) AS fights_won\nFROM v_combats f JOIN v_characters c ON c.table_id = f.table_id" +
					and(q.where("f.ended_at", "f.ruleset"), "f.outcome = 'player_win'") + "\nGROUP BY c.class\nORDER BY fights_won DESC, c.class",
				chart: chart.Spec{Type: chart.Bar, X: "class", Y: []string{"fights_won"}, Title: "Fights won per class" + q.scope(true)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No party won a fight" + q.scope(true) + "."
					}
					return fmt.Sprintf("Parties with a %s won most: %s fights%s.", r.Rows[0][0], num(r.Rows[0][1]), q.scope(true))
				},
			}
		},
	},
	{
		name: "online now", example: "who is online now?", words: vocab(onlineWords), live: true,
		match: func(q question) bool {
			return q.has("online", "connected") || (q.phrase("right now", "now") && q.has("player", "playing", "who"))
		},
		read: func(q question) string { return "the players connected right now (live, not from the database)" },
		plan: func(q question) plan {
			return plan{
				chart: chart.Spec{Type: chart.Table, Title: "Players connected now"},
				say: func(r *Result) string {
					players := map[any]bool{}
					for _, row := range r.Rows {
						players[row[0]] = true
					}
					switch len(players) {
					case 0:
						return "Nobody is connected right now."
					case 1:
						return "1 player is connected right now."
					}
					return fmt.Sprintf("%d players are connected right now.", len(players))
				},
			}
		},
	},
	{
		name: "turn latency", example: "how long do players wait for the DM's answer?", words: vocab(waitWords),
		match: func(q question) bool {
			return q.has("latency", "wait", "waiting", "waited", "long", "slow", "fast", "quick") && q.has("turn", "answer", "respond", "reply", "action", "dm") &&
				!q.has(append([]string{"llm", "model", "agent", "tool"}, costWords...)...)
		},
		read: func(q question) string {
			return "how long a player's action waited for the DM's answer" + q.scope(false) + " (acknowledged to resolved, in seconds)"
		},
		plan: func(q question) plan {
			return plan{
				sql: "SELECT count(*) AS actions, CAST(round(avg(wait_s)) AS INTEGER) AS average_s, max(wait_s) AS longest_s\nFROM v_pending_actions" +
					and(q.where("created_at", ""), "kind = 'act' AND wait_s IS NOT NULL"),
				chart: chart.Spec{Type: chart.Table, Title: "Time from an action to the DM's answer" + q.scope(false)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 || toFloat(r.Rows[0][0]) == 0 {
						return "No action was answered" + q.scope(false) + "."
					}
					row := r.Rows[0]
					return fmt.Sprintf("Over %s answered actions%s, players waited %s s on average, %s s at most.", num(row[0]), q.scope(false), num(row[1]), num(row[2]))
				},
			}
		},
	},
	{
		name: "spend by table", example: "which tables cost the most?", words: vocab(spendWords),
		match: func(q question) bool { return q.has(costWords...) && q.has("table") },
		read: func(q question) string {
			return fmt.Sprintf("the LLM cost per table%s, the top %d", q.scope(false), q.n)
		},
		plan: func(q question) plan {
			return plan{
				sql: "SELECT coalesce(t.name, c.table_id) AS table_name, round(sum(c.cost_usd), 4) AS cost_usd, count(*) AS calls\nFROM v_llm_calls c LEFT JOIN v_tables t ON t.table_id = c.table_id" +
					and(q.where("c.started_at", ""), "c.table_id != ''") + fmt.Sprintf("\nGROUP BY c.table_id, t.name\nORDER BY cost_usd DESC, table_name\nLIMIT %d", q.n),
				chart: chart.Spec{Type: chart.Bar, X: "table_name", Y: []string{"cost_usd"}, Title: "LLM cost per table" + q.scope(false)},
				say: func(r *Result) string {
					if len(r.Rows) == 0 {
						return "No table made a model call" + q.scope(false) + "."
					}
					return fmt.Sprintf("%s cost the most%s: %s over %s calls.", r.Rows[0][0], q.scope(false), usd(toFloat(r.Rows[0][1])), num(r.Rows[0][2]))
				},
			}
		},
	},
}

// online lists the players connected now (Analyst.Online) as a result.
func (a *Analyst) online(ctx context.Context) (*Result, error) {
	ps, err := a.Online(ctx)
	if err != nil {
		return nil, err
	}
	r := &Result{Columns: []string{"player", "table", "role"}, Rows: [][]any{}}
	for _, p := range ps {
		r.Rows = append(r.Rows, []any{p.Player, p.Table, p.Role})
	}
	return r, nil
}
