package dataset

// The reading of a question: its words, and the filters (a time window,
// a ruleset) that scope the SQL of whichever shape answers it.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// question is a parsed question: its words and the filters found in it.
type question struct {
	words   []string
	text    string // " w1 w2 … ", for phrase lookups
	window  window
	ruleset string
	n       int
}

// window is a time filter: [since, until) on a view's time column.
type window struct {
	label        string // "this week", … ("" for all time)
	since, until time.Time
}

var (
	nonWord = regexp.MustCompile(`[^a-z0-9]+`)
	// lastDays reads the question as typed: the word pass would drop a
	// minus sign.
	lastDays = regexp.MustCompile(`\b(?:last|past)\s+([-+−]?\d+)\s+days?\b`)
	topN     = regexp.MustCompile(` top (\d+) `)
)

func parse(s string, now time.Time) question {
	words := strings.Fields(nonWord.ReplaceAllString(strings.ToLower(s), " "))
	q := question{words: words, text: " " + strings.Join(words, " ") + " ", n: 10}
	for _, w := range words {
		if w == "d20" || w == "d100" {
			q.ruleset = w
		}
	}
	if m := topN.FindStringSubmatch(q.text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 && n <= 100 {
			q.n = n
		}
	}
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch {
	case q.phrase("today"):
		q.window = window{label: "today", since: day}
	case q.phrase("yesterday"):
		q.window = window{label: "yesterday", since: day.AddDate(0, 0, -1), until: day}
	case q.phrase("this week"):
		monday := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		q.window = window{label: "this week", since: monday}
	case q.phrase("this month"):
		q.window = window{label: "this month", since: time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)}
	case q.phrase("last week"), q.phrase("past week"):
		q.window = window{label: "in the last 7 days", since: now.AddDate(0, 0, -7)}
	case q.phrase("last 24 hours"), q.phrase("past 24 hours"), q.phrase("last day"):
		q.window = window{label: "in the last 24 hours", since: now.Add(-24 * time.Hour)}
	default:
		if m := lastDays.FindStringSubmatch(strings.ToLower(s)); m != nil {
			q.window = lastNDays(m[1], now)
		}
	}
	return q
}

// The bounds of a "last N days" window. Beyond a century no table exists,
// and time.AddDate wraps around far before the int's limit.
const (
	minDays = 1
	maxDays = 36500
)

// lastNDays is the window of the last n days, n as written; a number
// out of [minDays, maxDays] (too large for an int included) is clamped,
// and the label says so.
func lastNDays(n string, now time.Time) window {
	n = strings.Replace(n, "−", "-", 1)
	days, err := strconv.Atoi(n)
	note := ""
	switch {
	case err != nil && strings.HasPrefix(n, "-"), err == nil && days < minDays:
		days, note = minDays, " (the least I look back)"
	case err != nil, days > maxDays:
		days, note = maxDays, " (the most I look back)"
	}
	label := "in the last " + thousands(days) + " days" + note
	if days == 1 {
		label = "in the last day" + note
	}
	return window{label: label, since: now.AddDate(0, 0, -days)}
}

// has reports whether any of words occurs in the question, also as a
// plural (forms, exact.go: the one plural rule of the analyst).
func (q question) has(words ...string) bool {
	for _, w := range q.words {
		for _, f := range forms(w) {
			if slices.Contains(words, f) {
				return true
			}
		}
	}
	return false
}

// phrase reports whether one of the phrases occurs in the question.
func (q question) phrase(ps ...string) bool {
	for _, p := range ps {
		if strings.Contains(q.text, " "+p+" ") {
			return true
		}
	}
	return false
}

// where returns the SQL conditions for the time window on col and, if the
// view has one, the ruleset; "" if none.
func (q question) where(timeCol, rulesetCol string) string {
	var c []string
	if !q.window.since.IsZero() {
		c = append(c, fmt.Sprintf("%s >= '%s'", timeCol, q.window.since.Format(storeTime)))
	}
	if !q.window.until.IsZero() {
		c = append(c, fmt.Sprintf("%s < '%s'", timeCol, q.window.until.Format(storeTime)))
	}
	if q.ruleset != "" && rulesetCol != "" {
		c = append(c, fmt.Sprintf("%s = '%s'", rulesetCol, q.ruleset))
	}
	if len(c) == 0 {
		return ""
	}
	return "\nWHERE " + strings.Join(c, " AND ")
}

// storeTime is the store's time format (internal/db): text order is time
// order, so windows compare as text.
const storeTime = "2006-01-02T15:04:05.000000000Z07:00"

// scope words the filters for a sentence: " in the d20 ruleset this week".
func (q question) scope(withRuleset bool) string {
	s := ""
	if withRuleset && q.ruleset != "" {
		s += " in the " + q.ruleset + " ruleset"
	}
	if q.window.label != "" {
		s += " " + q.window.label
	}
	return s
}
