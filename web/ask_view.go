package web

import "tavern/internal/dataset"

// askFollowUpHint is the question box's hint once a conversation runs: a
// neutral one, as the first hint may be just what was asked.
const askFollowUpHint = "Narrow it down, compare, or ask why…"

// askHint is the question box's hint: an example first, then a neutral
// follow-up hint (static/ask.js switches to it after the first answer).
func askHint(followUp bool) string {
	if followUp {
		return askFollowUpHint
	}
	return "Which tables played most this week?"
}

// stepCaption is the line above a step; a chart's is left out when it only
// repeats the title drawn in the chart.
func stepCaption(s dataset.Step) string {
	if s.Chart != nil && s.Description == s.Chart.Title {
		return ""
	}
	return s.Description
}
