package agent_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/store"
)

func call(id, name string) agent.ToolCall {
	return agent.ToolCall{ID: id, Type: "function", Function: agent.FunctionCall{Name: name, Arguments: "{}"}}
}

// TestSanitizeSeed004 loads seed 004's example (a history cut between a
// call and its result, and worse) and checks that what remains is valid
// and that each removal was logged.
func TestSanitizeSeed004(t *testing.T) {
	cases := []struct {
		name     string
		in, want []agent.Message
		warnings int
	}{
		{
			name: "seed 004: window starts at an orphaned result",
			in: []agent.Message{
				{Role: "tool", ToolCallID: "toolu_ABC", Content: "Résultat"},
				{Role: "assistant", Content: "Réponse 1"},
				{Role: "user", Content: "Autre question"},
				{Role: "assistant", Content: "Réponse 2"},
			},
			want: []agent.Message{
				{Role: "user", Content: "Autre question"},
				{Role: "assistant", Content: "Réponse 2"},
			},
			warnings: 2,
		},
		{
			name: "seed 004: orphan kept out, the valid pair kept",
			in: []agent.Message{
				{Role: "user", Content: "Question"},
				{Role: "tool", ToolCallID: "ABC", Content: "orphan"},
				{Role: "assistant", ToolCalls: []agent.ToolCall{call("DEF", "look")}},
				{Role: "tool", ToolCallID: "DEF", Content: "a square"},
				{Role: "assistant", Content: "Réponse"},
			},
			want: []agent.Message{
				{Role: "user", Content: "Question"},
				{Role: "assistant", ToolCalls: []agent.ToolCall{call("DEF", "look")}},
				{Role: "tool", ToolCallID: "DEF", Content: "a square"},
				{Role: "assistant", Content: "Réponse"},
			},
			warnings: 1,
		},
		{
			name: "unanswered call and a result after another message",
			in: []agent.Message{
				{Role: "user", Content: "q"},
				{Role: "assistant", Content: "let me see", ToolCalls: []agent.ToolCall{call("A", "look"), call("B", "look")}},
				{Role: "tool", ToolCallID: "A", Content: "ok"},
				{Role: "user", Content: "again"},
				{Role: "tool", ToolCallID: "B", Content: "late"},
				{Role: "assistant", ToolCalls: []agent.ToolCall{call("C", "look")}},
			},
			want: []agent.Message{
				{Role: "user", Content: "q"},
				{Role: "assistant", Content: "let me see", ToolCalls: []agent.ToolCall{call("A", "look")}},
				{Role: "tool", ToolCallID: "A", Content: "ok"},
				{Role: "user", Content: "again"},
			},
			warnings: 4,
		},
		{
			name: "duplicate results",
			in: []agent.Message{
				{Role: "user", Content: "q"},
				{Role: "assistant", ToolCalls: []agent.ToolCall{call("A", "look")}},
				{Role: "tool", ToolCallID: "A", Content: "one"},
				{Role: "tool", ToolCallID: "A", Content: "two"},
			},
			want: []agent.Message{
				{Role: "user", Content: "q"},
				{Role: "assistant", ToolCalls: []agent.ToolCall{call("A", "look")}},
				{Role: "tool", ToolCallID: "A", Content: "one"},
			},
			warnings: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			got := agent.Sanitize(c.in, slog.New(slog.NewTextHandler(&logs, nil)))
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if ok, why := agent.Valid(got); !ok {
				t.Errorf("invalid: %s", why)
			}
			if n := strings.Count(logs.String(), "level=WARN"); n != c.warnings {
				t.Errorf("%d warnings, want %d:\n%s", n, c.warnings, logs.String())
			}
		})
	}
}

// history builds an agent history from fuzz bytes. In valid mode every
// turn is well formed (a user message first, each call answered right
// after it); otherwise anything goes: orphans, unanswered calls, odd
// roles, turns that do not start with a user message.
func history(data []byte, valid bool) []agent.Message {
	var out []agent.Message
	turn, id := 0, 0
	nextID := func() string { id++; return fmt.Sprintf("c%d", id) }
	text := func(b byte) string { return strings.Repeat("word ", int(b%40)) }
	for i, b := range data {
		op := b % 8
		if valid && (op == 3 || op == 4 || op == 5 || op == 7) {
			op = 1
		}
		if valid && turn == 0 {
			op = 0
		}
		switch op {
		case 0: // a new turn
			turn++
			out = append(out, agent.Message{Role: "user", Content: "Turn. " + text(b), Turn: turn})
		case 1:
			out = append(out, agent.Message{Role: "assistant", Content: "narration " + text(b), Turn: turn})
		case 2: // calls, answered at once
			n := 1 + int(b>>3)%3
			var calls []agent.ToolCall
			for range n {
				calls = append(calls, call(nextID(), "look"))
			}
			out = append(out, agent.Message{Role: "assistant", ToolCalls: calls, Turn: turn})
			for k := n - 1; k >= 0; k-- { // answered in any order
				out = append(out, agent.Message{Role: "tool", ToolCallID: calls[k].ID, Content: text(b), Turn: turn})
			}
		case 3: // a result for some id, maybe an old one
			out = append(out, agent.Message{Role: "tool", ToolCallID: fmt.Sprintf("c%d", int(b>>3)%(id+2)), Turn: turn})
		case 4: // a turn that does not start with a user message
			turn++
			out = append(out, agent.Message{Role: "assistant", Content: "x", Turn: turn})
		case 5: // an unanswered call
			out = append(out, agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call(nextID(), "look")}, Turn: turn})
		case 6: // a retry prompt inside the turn
			out = append(out, agent.Message{Role: "user", Content: "You must end the turn", Turn: turn})
		case 7:
			out = append(out, agent.Message{Role: []string{"system", "", "function"}[i%3], Content: "?", Turn: turn})
		}
	}
	return out
}

// FuzzWindow checks that for any history and any window size the context
// sent to the model is valid (every tool result right after its call,
// every call answered, a user message first), that Split partitions the
// history at a turn boundary, and that a well-formed history is never cut
// inside a turn (the sanitiser then has nothing to remove).
func FuzzWindow(f *testing.F) {
	f.Add([]byte{0, 2, 10, 1, 0, 5, 3, 0, 2, 6, 1}, uint8(10), uint8(20), uint16(6000))
	f.Add([]byte{3, 4, 7, 0, 2, 2, 2, 0, 1}, uint8(1), uint8(2), uint16(10))
	f.Add([]byte("a history of many turns, with calls and results"), uint8(0), uint8(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, minMsgs, maxMsgs uint8, budget uint16) {
		cfg := agent.WindowConfig{MinMessages: int(minMsgs % 32), MaxMessages: int(maxMsgs % 48), TokenBudget: int(budget)}
		for _, valid := range []bool{false, true} {
			msgs := history(data, valid)
			archive, keep := cfg.Split(msgs)
			if len(archive)+len(keep) != len(msgs) || (len(keep) > 0 && &keep[len(keep)-1] != &msgs[len(msgs)-1]) {
				t.Fatalf("Split does not partition the history")
			}
			if len(archive) > 0 && len(keep) > 0 && archive[len(archive)-1].Turn == keep[0].Turn && keep[0].Turn != 0 {
				t.Fatalf("cut inside turn %d", keep[0].Turn)
			}
			if len(msgs) > 0 && len(keep) == 0 {
				t.Fatalf("the newest turn was archived")
			}
			ctx := cfg.Context(nil, keep, nil)
			if ok, why := agent.Valid(ctx); !ok {
				t.Fatalf("valid=%v: context invalid: %s\n%+v", valid, why, ctx)
			}
			if valid {
				var logs bytes.Buffer
				clean := agent.Sanitize(keep, slog.New(slog.NewTextHandler(&logs, nil)))
				if len(clean) != len(keep) {
					t.Fatalf("a well-formed history was cut inside a turn:\n%s", logs.String())
				}
			}
		}
	})
}

// turnsOf builds a well-formed history: one turn per size, each a user
// message, then (size-2)/2 answered calls, then a narration; every
// message's content is pad bytes long.
func turnsOf(pad int, sizes ...int) []agent.Message {
	var out []agent.Message
	for i, n := range sizes {
		turn := i + 1
		out = append(out, agent.Message{Role: "user", Content: strings.Repeat("u", pad), Turn: turn})
		for k := 0; k < (n-2)/2; k++ {
			id := fmt.Sprintf("t%dc%d", turn, k)
			out = append(out, agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call(id, "look")}, Turn: turn},
				agent.Message{Role: "tool", ToolCallID: id, Content: strings.Repeat("r", pad), Turn: turn})
		}
		out = append(out, agent.Message{Role: "assistant", Content: strings.Repeat("n", pad), Turn: turn})
	}
	return out
}

func TestWindowSplit(t *testing.T) {
	cases := []struct {
		name        string
		cfg         agent.WindowConfig
		msgs        []agent.Message
		archived    int // messages
		keptFromTrn int
	}{
		{"within max: nothing archived", agent.WindowConfig{}, turnsOf(10, 4, 4, 4, 4, 4), 0, 1},
		{"over max: keep at least min, whole turns", agent.WindowConfig{}, turnsOf(10, 4, 4, 4, 4, 4, 4), 12, 4},
		{"min reached inside a turn keeps the whole turn", agent.WindowConfig{}, turnsOf(10, 6, 6, 6, 6), 12, 3},
		{"a huge last turn is kept alone", agent.WindowConfig{}, turnsOf(10, 4, 4, 30), 8, 3},
		{"token budget binds before min", agent.WindowConfig{TokenBudget: 300}, turnsOf(400, 2, 2, 2, 2), 6, 4},
		{"token budget under max triggers archiving", agent.WindowConfig{TokenBudget: 1000}, turnsOf(400, 2, 2, 2, 2, 2, 2), 4, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			archive, keep := c.cfg.Split(c.msgs)
			if len(archive) != c.archived || keep[0].Turn != c.keptFromTrn {
				t.Errorf("archived %d, kept from turn %d; want %d, %d", len(archive), keep[0].Turn, c.archived, c.keptFromTrn)
			}
			if ok, why := agent.Valid(keep); !ok {
				t.Errorf("kept window: %s", why)
			}
		})
	}
}

func TestContextStripsStaleState(t *testing.T) {
	window := []agent.Message{{Role: "user", Content: "Turn 3. Ann acts.\n<context>\n{\"hp\":3}\n</context>\n<player_words>\nhi\n</player_words>"}, {Role: "assistant", Content: "Hello."}}
	mems := []store.Memory{{ID: 1, FirstTurn: 1, LastTurn: 2, Title: "A", Summary: "a."}, {ID: 2, Title: "B"}, {ID: 3, Title: "C"}, {ID: 4, FirstTurn: 7, LastTurn: 8, Title: "D", Summary: "d.", Keywords: []string{"x", "y"}}}
	got := agent.WindowConfig{}.Context(mems, window, nil)
	if len(got) != 3 || got[0].Role != "system" || strings.Contains(got[0].Content, "Session 1 ") || !strings.Contains(got[0].Content, "- Session 4 (turns 7-8) D: d. [keywords: x, y]") {
		t.Fatalf("context %+v", got)
	}
	if got[1].Content != "Turn 3. Ann acts.\n<player_words>\nhi\n</player_words>" {
		t.Errorf("stale state kept: %q", got[1].Content)
	}
	if !strings.Contains(window[0].Content, "<context>") {
		t.Errorf("the window itself was modified")
	}
}
