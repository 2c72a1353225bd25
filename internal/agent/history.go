package agent

import (
	"fmt"
	"log/slog"
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
			answered := map[string]bool{}
			for _, r := range msgs[i+1 : end] {
				answered[r.ToolCallID] = true
			}
			kept := make([]ToolCall, 0, len(m.ToolCalls))
			calls := map[string]bool{}
			for _, c := range m.ToolCalls {
				if c.ID == "" || !answered[c.ID] || calls[c.ID] {
					log.Warn("history: dropped unanswered tool call", "tool", c.Function.Name, "id", c.ID, "index", i)
					continue
				}
				calls[c.ID] = true
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
			for j := i + 1; j < end; j++ {
				r := msgs[j]
				if !calls[r.ToolCallID] {
					log.Warn("history: dropped orphaned tool result", "id", r.ToolCallID, "index", j)
					continue
				}
				delete(calls, r.ToolCallID) // a second result for one call is an orphan too
				out = append(out, r)
			}
			i = end - 1
		default:
			log.Warn("history: dropped message with unknown role", "role", m.Role, "index", i)
		}
	}
	return out
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
