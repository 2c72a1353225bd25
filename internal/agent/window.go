package agent

import (
	"log/slog"
	"strconv"
	"strings"

	"tavern/internal/store"
)

// WindowConfig shapes what an agent sees of its history (DESIGN.md
// "History", seed 001): the system prompt, the last Summaries memory
// summaries, then the recent window, then the turn. The active history (the
// messages not archived yet) grows until it holds more than MaxMessages
// messages or more than TokenBudget estimated tokens; then its oldest
// whole turns are archived into a memory, keeping at least MinMessages
// (whole turns, so possibly a few more). Zero fields take the defaults.
type WindowConfig struct {
	MinMessages int // default 10
	MaxMessages int // default 20
	TokenBudget int // default 6000 estimated tokens
	Summaries   int // default 3
}

// TurnMessages is the fewest messages a turn stores: the player's
// message, the model's call of an output tool and that call's result
// (Runner.Run). A window that keeps fewer could not hold a whole turn.
const TurnMessages = 3

// DefaultWindow returns the window with every field at its default (seed
// 001's MIN_MESSAGES_IN_SESSION, MAX_MESSAGES_BEFORE_ARCHIVE and
// SUMMARIES_IN_CONTEXT, and the token budget).
func DefaultWindow() WindowConfig { return WindowConfig{}.WithDefaults() }

// WithDefaults returns c with its zero fields set to the defaults.
func (c WindowConfig) WithDefaults() WindowConfig {
	if c.MinMessages <= 0 {
		c.MinMessages = 10
	}
	if c.MaxMessages <= 0 {
		c.MaxMessages = 20
	}
	if c.MaxMessages < c.MinMessages {
		c.MaxMessages = c.MinMessages
	}
	if c.TokenBudget <= 0 {
		c.TokenBudget = 6000
	}
	if c.Summaries <= 0 {
		c.Summaries = 3
	}
	return c
}

// EstimateTokens is the rough token count of a message (four bytes a
// token plus a little overhead), used for the window's budget.
func EstimateTokens(m Message) int {
	n := len(m.Content) + len(m.ToolCallID)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n/4 + 4
}

// Turns splits msgs into turns: the runs of messages with the same Turn
// number. Messages with Turn 0 (unknown) start a new turn at each user
// message. The cut points of the history are the boundaries between these
// groups only, so an assistant message with tool calls is never separated
// from its results (seed 004's long-term fix). The groups are subslices
// of msgs, each capped at its end (appending to one copies it).
func Turns(msgs []Message) [][]Message {
	var out [][]Message
	start := 0
	for i, m := range msgs {
		newTurn := i > 0 && (m.Turn != msgs[i-1].Turn || (m.Turn == 0 && m.Role == "user"))
		if newTurn {
			out = append(out, msgs[start:i:i])
			start = i
		}
	}
	if len(msgs) > 0 {
		out = append(out, msgs[start:len(msgs):len(msgs)])
	}
	return out
}

// Split divides an agent's active history (oldest first) into the oldest
// whole turns to archive and the recent ones to keep. Nothing is archived
// while the history is within MaxMessages and TokenBudget. Otherwise the
// newest turns are kept until they hold MinMessages messages, without
// passing MaxMessages or TokenBudget once at least one turn is kept (the
// newest turn is always kept). archive and keep are subslices of msgs.
func (c WindowConfig) Split(msgs []Message) (archive, keep []Message) {
	c = c.WithDefaults()
	tokens := 0
	for _, m := range msgs {
		tokens += EstimateTokens(m)
	}
	if len(msgs) <= c.MaxMessages && tokens <= c.TokenBudget {
		return nil, msgs
	}
	groups := Turns(msgs)
	kept, ktok, k := 0, 0, len(groups)
	for k > 0 && kept < c.MinMessages {
		g := groups[k-1]
		gtok := 0
		for _, m := range g {
			gtok += EstimateTokens(m)
		}
		if kept > 0 && (kept+len(g) > c.MaxMessages || ktok+gtok > c.TokenBudget) {
			break
		}
		kept, ktok, k = kept+len(g), ktok+gtok, k-1
	}
	cut := len(msgs) - kept
	return msgs[:cut:cut], msgs[cut:]
}

// StripContext removes the state blocks of a past turn's user message, as
// Context does: each "<context>\n…\n</context>" (and the line break after
// it) was true then and is misleading now; the current turn carries a
// fresh one, and dropping it keeps the window small and its size flat.
// Doing it again changes nothing, so a caller may keep messages stripped
// once (the hub's history cache).
func StripContext(content string) string {
	var b strings.Builder
	for {
		i := strings.Index(content, contextOpen)
		if i < 0 {
			break
		}
		j := strings.Index(content[i+len(contextOpen):], contextClose)
		if j < 0 {
			break
		}
		end := i + len(contextOpen) + j + len(contextClose)
		if end < len(content) && content[end] == '\n' {
			end++
		}
		b.WriteString(content[:i])
		content = content[end:]
	}
	if b.Len() == 0 {
		return content
	}
	b.WriteString(content)
	return b.String()
}

// Context returns the messages that precede the turn's own: a system
// message with the memory summaries (oldest first), if any, then the
// window, sanitised (a second line of defence: see [Sanitize]) and with
// the state blocks of past turns removed. window is not modified.
func (c WindowConfig) Context(memories []store.Memory, window []Message, log *slog.Logger) []Message {
	c = c.WithDefaults()
	out := make([]Message, 0, len(window)+1) // the window and the memories
	if len(memories) > c.Summaries {
		memories = memories[len(memories)-c.Summaries:]
	}
	if len(memories) > 0 {
		out = append(out, Message{Role: "system", Content: memoriesMessage(memories)})
	}
	for _, m := range Sanitize(window, log) {
		if m.Role == "user" {
			m.Content = StripContext(m.Content)
		}
		out = append(out, m)
	}
	return out
}

// memoriesMessage renders the memories the window starts with. It runs
// before every turn: appends, not fmt.
func memoriesMessage(memories []store.Memory) string {
	b := []byte("Memories of earlier play at this table, oldest first (search_memories and recall_session_details find more):")
	for _, m := range memories {
		b = append(b, "\n- Session "...)
		b = strconv.AppendInt(b, m.ID, 10)
		b = append(b, " (turns "...)
		b = strconv.AppendInt(b, int64(m.FirstTurn), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(m.LastTurn), 10)
		b = append(append(append(append(b, ") "...), m.Title...), ": "...), m.Summary...)
		for i, k := range m.Keywords {
			if i == 0 {
				b = append(b, " [keywords: "...)
			} else {
				b = append(b, ", "...)
			}
			b = append(b, k...)
		}
		if len(m.Keywords) > 0 {
			b = append(b, ']')
		}
	}
	return string(b)
}
