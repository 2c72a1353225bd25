package agent

import (
	"fmt"
	"log/slog"
	"slices"
)

// Sanitize returns msgs made valid for the Chat Completions API, the second
// line of defence of seed 004 (the first is [WindowConfig.Split], which
// never cuts inside a turn):
//   - leading messages are dropped until the first user message;
//   - a tool result is kept only in the run of tool messages right after
//     the assistant message that made the call, once per call (orphaned
//     results are dropped);
//   - a tool call is kept only if that run answers it (unanswered calls
//     are dropped, and an assistant message left with neither calls nor
//     text is dropped);
//   - messages of any other role than user, assistant and tool are
//     dropped.
//
// Each removal is logged as a warning. msgs is not modified; the result
// shares no ToolCalls slice with it.
func Sanitize(msgs []Message, log *slog.Logger) []Message {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := make([]Message, 0, len(msgs))
	started := false
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if !started {
			if m.Role != "user" {
				log.Warn("history: dropped message before the first user message", "role", m.Role, "index", i)
				continue
			}
			started = true
		}
		switch m.Role {
		case "user":
			out = append(out, m)
		case "tool":
			log.Warn("history: dropped orphaned tool result", "id", m.ToolCallID, "index", i)
		case "assistant":
			// The run of tool messages that follows answers this message.
			end := i + 1
			for end < len(msgs) && msgs[end].Role == "tool" {
				end++
			}
			// A turn makes a few calls: scans, not maps (this runs before
			// every turn, over the whole window).
			results := msgs[i+1 : end]
			kept := make([]ToolCall, 0, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				if c.ID == "" || !hasResult(results, c.ID) || hasCall(kept, c.ID) {
					log.Warn("history: dropped unanswered tool call", "tool", c.Function.Name, "id", c.ID, "index", i)
					continue
				}
				kept = append(kept, c)
			}
			m.ToolCalls = kept
			if len(kept) == 0 {
				m.ToolCalls = nil
			}
			if len(kept) > 0 || m.Content != "" {
				out = append(out, m)
			} else {
				log.Warn("history: dropped empty assistant message", "index", i)
			}
			for j, r := range results {
				if !hasCall(kept, r.ToolCallID) || hasResult(results[:j], r.ToolCallID) { // a second result for one call is an orphan too
					log.Warn("history: dropped orphaned tool result", "id", r.ToolCallID, "index", i+1+j)
					continue
				}
				out = append(out, r)
			}
			i = end - 1
		default:
			log.Warn("history: dropped message with unknown role", "role", m.Role, "index", i)
		}
	}
	return out
}

// hasResult reports whether one of results answers the call id.
func hasResult(results []Message, id string) bool {
	return slices.ContainsFunc(results, func(r Message) bool { return r.ToolCallID == id })
}

// hasCall reports whether one of calls has the id.
func hasCall(calls []ToolCall, id string) bool {
	return slices.ContainsFunc(calls, func(c ToolCall) bool { return c.ID == id })
}

// Valid reports whether msgs is a valid conversation for the Chat
// Completions API as Sanitize defines it; the first problem is described.
func Valid(msgs []Message) (bool, string) {
	if len(msgs) > 0 && msgs[0].Role != "user" {
		return false, "does not start with a user message"
	}
	open := map[string]bool{}
	for i, m := range msgs {
		if m.Role != "tool" && len(open) > 0 {
			return false, fmt.Sprintf("message %d comes before every call is answered", i)
		}
		switch m.Role {
		case "user":
		case "assistant":
			if len(m.ToolCalls) == 0 && m.Content == "" {
				return false, fmt.Sprintf("message %d is an empty assistant message", i)
			}
			for _, c := range m.ToolCalls {
				if c.ID == "" || open[c.ID] {
					return false, fmt.Sprintf("message %d has a missing or repeated call id", i)
				}
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				return false, fmt.Sprintf("message %d is an orphaned tool result", i)
			}
			delete(open, m.ToolCallID)
		default:
			return false, fmt.Sprintf("message %d has role %q", i, m.Role)
		}
	}
	if len(open) > 0 {
		return false, "the last calls are unanswered"
	}
	return true, ""
}
