package agent

import (
	"log/slog"
)

// Sanitize returns msgs with every orphaned tool result (no preceding
// assistant call with its id) and every unanswered tool call removed, and
// with leading messages dropped until the first user message, so the
// context sent to a model is always valid (seed 004). Each removal is
// logged as a warning. msgs is not modified.
func Sanitize(msgs []Message, log *slog.Logger) []Message {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	answered := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" {
			answered[m.ToolCallID] = true
		}
	}
	out := make([]Message, 0, len(msgs))
	open := map[string]bool{} // calls made and not yet answered
	started := false
	for _, m := range msgs {
		if !started {
			if m.Role != "user" {
				log.Warn("history: dropped message before the first user message", "role", m.Role)
				continue
			}
			started = true
		}
		switch m.Role {
		case "assistant":
			if len(m.ToolCalls) > 0 {
				kept := make([]ToolCall, 0, len(m.ToolCalls))
				for _, c := range m.ToolCalls {
					if answered[c.ID] {
						kept = append(kept, c)
						open[c.ID] = true
					} else {
						log.Warn("history: dropped unanswered tool call", "tool", c.Function.Name, "id", c.ID)
					}
				}
				m.ToolCalls = kept
				if len(kept) == 0 && m.Content == "" {
					continue
				}
			}
		case "tool":
			if !open[m.ToolCallID] {
				log.Warn("history: dropped orphaned tool result", "id", m.ToolCallID)
				continue
			}
			delete(open, m.ToolCallID)
		}
		out = append(out, m)
	}
	return out
}
