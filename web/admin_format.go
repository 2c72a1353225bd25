package web

// The operator's templates' formatting: times, counts, money, states and
// the small views a page draws. Pure functions of what the handlers in
// admin.go hand the templates.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
)

// ago is a time relative to now: "just now", "3 min ago", "2 h ago",
// "5 d ago".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " d ago"
}

// clustered reports whether ns are the nodes of a cluster: they hold
// leases (SQLite's one node does not).
func clustered(ns []hub.NodeView) bool {
	for _, n := range ns {
		if n.ExpiresAt != nil {
			return true
		}
	}
	return false
}

// nodePill is the pill class of a node's state: alive is well, draining
// is on its way out, dead has lost its tables to the others.
func nodePill(state string) string {
	switch state {
	case "alive":
		return "ok"
	case "draining":
		return "paused"
	}
	return "closed"
}

// leaseLeft says when a node's lease runs out, or since when it has.
func leaseLeft(t, now time.Time) string {
	d := t.Sub(now).Round(time.Second)
	switch {
	case t.IsZero():
		return "none"
	case d >= 0:
		return "renewed, " + strconv.Itoa(int(d/time.Second)) + " s left"
	}
	return "lapsed " + ago(t, now)
}

// absTime is the absolute time in a title attribute.
func absTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func optTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// num groups thousands: 12,345.
func num[N int | int64](n N) string {
	s := strconv.FormatInt(int64(n), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// tokensOf is a call's prompt→completion tokens, or "unknown" when its
// server sent no usage.
func tokensOf(c store.LLMCall) string {
	if c.UsageUnknown() {
		return "unknown"
	}
	return num(c.PromptTokens) + "→" + num(c.CompletionTokens)
}

// unknownUsage says how many calls of s have no usage, if any: their
// tokens and cost are not in the sums.
func unknownUsage(s hub.LLMStats) string {
	switch s.UsageUnknown {
	case 0:
		return ""
	case 1:
		return "unknown for 1 call (no usage sent)"
	}
	return "unknown for " + num(s.UsageUnknown) + " calls (no usage sent)"
}

// withSep is s after a " · ", or "" for "".
func withSep(s string) string {
	if s == "" {
		return ""
	}
	return " · " + s
}

// usdKnown is usd(s.CostUSD), marked when some calls' cost is unknown.
func usdKnown(s hub.LLMStats) string {
	if s.UsageUnknown > 0 {
		return usd(s.CostUSD) + " + unknown"
	}
	return usd(s.CostUSD)
}

func usd(v float64) string {
	if v == 0 {
		return "$0"
	}
	if v < 0.01 {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("$%.2f", v)
}

func pct(v float64) string { return fmt.Sprintf("%.0f%%", v*100) }

// healthLabel and healthPill show a model's state (agent.ModelHealth).
func healthLabel(state string) string {
	switch state {
	case agent.ModelOK:
		return "answers"
	case agent.ModelFailing:
		return "failing"
	}
	return "no call yet"
}

func healthPill(state string) string {
	switch state {
	case agent.ModelOK:
		return "ok"
	case agent.ModelFailing:
		return "failed"
	}
	return ""
}

// healthRate is a model's error rate over the last five minutes, with
// its counts.
func healthRate(m agent.ModelHealth) string {
	if m.Calls5m == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% (%d of %d)", m.ErrorRate5m*100, m.Errors5m, m.Calls5m)
}

func errRate(s hub.LLMStats) string {
	if s.Calls == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", float64(s.Errors)*100/float64(s.Calls))
}

func ms(v int64) string {
	if v >= 10_000 {
		return fmt.Sprintf("%.1f s", float64(v)/1000)
	}
	return num(v) + " ms"
}

func uptime(sec int64) string {
	d := time.Duration(sec) * time.Second
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%d d %d h", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// eventText is a one-line description of an event for the operator's log.
// It is the event's words (text, message), else whom or what it names
// (name, outcome, mode), else its data as JSON.
func eventText(e engine.Event) string {
	var line []string
	switch d := e.Data.(type) {
	case engine.NarrationData:
		line = []string{d.Text}
	case engine.ActionData:
		line = []string{d.Text, d.Name}
	case engine.ChatData:
		line = []string{d.Text, d.Name}
	case engine.SystemData:
		line = []string{d.Message, string(d.Outcome)}
	case engine.PlayerJoinedData:
		line = []string{d.Name}
	case engine.PlayerLeftData:
		line = []string{d.Name}
	case engine.CombatantJoinedData:
		line = []string{d.Name}
	case engine.PartyMovedData:
		line = []string{d.Name}
	case engine.LocationCreatedData:
		line = []string{d.Name}
	case engine.CombatEndedData:
		line = []string{string(d.Outcome)}
	case engine.ModeData:
		line = []string{d.Mode}
	}
	for _, v := range line {
		if v != "" {
			return v
		}
	}
	b, _ := jsonCompact(e.Data)
	return b
}

func jsonCompact(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func activeText(a hub.AdminTable) string {
	if a.Active == nil {
		return ""
	}
	return a.Active.Name
}

func adminRound(a hub.AdminTable) string {
	if a.Round == nil {
		return ""
	}
	return strconv.Itoa(*a.Round)
}

func errKind(c store.LLMCall) string {
	if c.Error == "" {
		return ""
	}
	return hub.ErrorKindLabel(c.ErrorKind)
}

// callsOfTurn are the history's model calls made for turn no.
func callsOfTurn(h hub.History, no int) []store.LLMCall {
	var out []store.LLMCall
	t := "t" + strconv.Itoa(no)
	for _, c := range h.Calls {
		if c.Turn == t {
			out = append(out, c)
		}
	}
	return out
}

// turnsOf groups a history's messages by turn, newest turn last.
func turnsOf(h hub.History) [][]hub.HistoryEntry {
	var out [][]hub.HistoryEntry
	for _, m := range h.Messages {
		if n := len(out); n > 0 && out[n-1][0].Turn == m.Turn {
			out[n-1] = append(out[n-1], m)
			continue
		}
		out = append(out, []hub.HistoryEntry{m})
	}
	return out
}

// clip shortens s to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
