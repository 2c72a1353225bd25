// Package offline is the offline rules narrator: [Narrator], an
// agent.Model that plays the game master without a language model. It is
// the model when no API key is set and the model of most tests.
//
// It reads a turn the way an LLM would (the turn message's <context> block
// and the player's words, then the tool results of the turn so far) and
// answers with the next tool call. Start with [Narrator.Complete]; each
// file narrates one part of the game: intent.go reads what the player
// means, explore.go moving and looking around, talk.go talking and quests,
// trade.go buying, giving and looting, combat.go the fight, tactics.go
// what an NPC does on its turn, abilities.go abilities, rests, drops and a
// potion for a fallen friend, backstory.go a character's session start.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"tavern/internal/agent"
	"tavern/internal/engine"
)

// Narrator is the deterministic rules narrator, the default agent.Model
// when no API key is set and the model of most tests. It reads the turn
// (the <context> block and the player's words) and the tool results of the
// turn so far, and answers with the tool calls and output tool an LLM
// would: it parses intent (attack, move, look, talk, take, inventory,
// defend, flee), plays NPC turns by their tactics, and varies its
// narration with a hash of the turn, so the same turn always reads the
// same. In process it takes the turn's context from Request.Turn rather
// than decoding the block on every call (see parseTurn). Safe for
// concurrent use: it keeps no state between calls.
type Narrator struct{}

// Name implements agent.Model.
func (Narrator) Name() string { return "offline" }

// CanSummarize implements agent.Summarizer: the narrator plays by rules
// and writes no summaries, so archived history is summarised
// extractively.
func (Narrator) CanSummarize() bool { return false }

// step is one tool call of the current turn and its result.
type step struct {
	Name   string
	args   string // the call's JSON arguments: see arg
	Result string
	Err    bool
}

// arg returns the argument key of the step's call (nil if it has none).
// It decodes the arguments when asked: few plans read those of earlier
// calls, and decoding them all on every call was a tenth of the
// narrator's work.
func (s step) arg(key string) any {
	var args map[string]any
	_ = json.Unmarshal([]byte(s.args), &args)
	return args[key]
}

// offlineTurn is what the narrator knows of the turn.
type offlineTurn struct {
	Ctx   agent.TurnContext
	Words string
	Steps []step
	key   string
	moved *movedLocation // see movedTo
}

// Complete implements agent.Model.
func (Narrator) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	t, err := parseTurn(req)
	if err != nil {
		return agent.Response{}, err
	}
	var r reply
	if req.Agent == engine.AgentCombat {
		r = t.combat()
	} else {
		r = t.narrative()
	}
	call := r.toolCall()
	call.ID = "call_" + strconv.Itoa(t.Ctx.Turn) + "_" + strconv.Itoa(len(t.Steps)+1)
	call.Type = "function"
	if req.OnDelta != nil {
		// The narration is whole already: one delta, not the pieces a
		// model's stream would bring, each a frame to every socket of
		// the table when the table fans out faster than they come.
		if narration := r.narration(); narration != "" {
			req.OnDelta(narration)
		}
	}
	prompt := len(req.System)
	for _, m := range req.Messages {
		prompt += len(m.Content)
	}
	return agent.Response{
		Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call}},
		Usage:   agent.Usage{PromptTokens: prompt / 4, CompletionTokens: len(call.Function.Arguments) / 4},
	}, nil
}

// parseTurn reads the turn from the request: the last turn message and
// the tool calls and results after it. The turn's context is the one the
// runner hands in-process when there is one (the same value its <context>
// block was written from), else the block decoded: a narrator driven by
// the chat messages alone (as through the HTTP fake) reads the same turn.
func parseTurn(req agent.Request) (*offlineTurn, error) {
	msgs := req.Messages
	u := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" && agent.IsTurnMessage(msgs[i].Content) {
			u = i
			break
		}
	}
	if u < 0 {
		return nil, fmt.Errorf("offline narrator: no turn message")
	}
	t := &offlineTurn{}
	if req.Turn != nil {
		t.Ctx, t.Words = *req.Turn, agent.TurnWords(msgs[u].Content)
	} else {
		var err error
		if t.Ctx, t.Words, err = agent.ReadTurnMessage(msgs[u].Content); err != nil {
			return nil, fmt.Errorf("offline narrator: %w", err)
		}
	}
	turn := msgs[u+1:]
	for _, m := range turn {
		for _, c := range m.ToolCalls {
			s := step{Name: c.Function.Name, args: c.Function.Arguments}
			if r, ok := resultOf(turn, c.ID); ok {
				s.Result = r
				s.Err = strings.HasPrefix(r, "Error:") || strings.HasPrefix(r, "Unknown tool")
			}
			t.Steps = append(t.Steps, s)
		}
	}
	t.key = strconv.Itoa(t.Ctx.Turn) + "|" + t.Ctx.Kind + "|" + t.Words
	return t, nil
}

// resultOf returns the result of the call id: the last tool message
// answering it.
func resultOf(msgs []agent.Message, id string) (string, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Role == "tool" && m.ToolCallID == id {
			return m.Content, true
		}
	}
	return "", false
}

func (t *offlineTurn) last() *step {
	if len(t.Steps) == 0 {
		return nil
	}
	return &t.Steps[len(t.Steps)-1]
}

// pick chooses one of options by a hash of the turn and a salt.
func (t *offlineTurn) pick(salt string, options ...string) string {
	return options[int(fnvHash(t.key, "|", salt)%uint32(len(options)))]
}

// reply is the narrator's answer: the tool to call and its arguments.
type reply struct {
	name string
	args map[string]any
}

func call(name string, args map[string]any) reply { return reply{name: name, args: args} }

// toolCall is the reply as the model's tool call.
func (r reply) toolCall() agent.ToolCall {
	b, err := json.Marshal(r.args)
	if err != nil {
		panic(err) // args are maps of strings, numbers and lists
	}
	return agent.ToolCall{Function: agent.FunctionCall{Name: r.name, Arguments: string(b)}}
}

// narration is the reply's narration, as a reader of its tool call's
// arguments reads it (which is what streams: invalid UTF-8 reads as
// U+FFFD, so such a narration is read back from the JSON).
func (r reply) narration() string {
	s, _ := r.args["narration"].(string)
	if utf8.ValidString(s) {
		return s
	}
	var a struct {
		Narration string `json:"narration"`
	}
	_ = json.Unmarshal([]byte(r.toolCall().Function.Arguments), &a)
	return a.Narration
}

// fmtList joins items for a sentence, or says there are none.
func fmtList(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

// stepNamed returns the result of the first step calling name.
func (t *offlineTurn) stepNamed(name string) (step, bool) {
	for _, s := range t.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return step{}, false
}

// stepWith returns the step calling name whose argument key is value.
func (t *offlineTurn) stepWith(name, key, value string) (step, bool) {
	for _, s := range t.Steps {
		if s.Name == name && s.arg(key) == value {
			return s, true
		}
	}
	return step{}, false
}

func (t *offlineTurn) failed() (string, bool) {
	for _, s := range t.Steps {
		if s.Err {
			return strings.TrimPrefix(s.Result, "Error: "), true
		}
	}
	return "", false
}

func decodeStep[T any](s step) T {
	var v T
	_ = json.Unmarshal([]byte(s.Result), &v)
	return v
}

// fnvHash is the 32-bit FNV-1a hash (hash/fnv's New32a) of the parts
// written one after the other, without joining them or allocating a
// hash.Hash.
func fnvHash(parts ...string) uint32 {
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint32(p[i])
			h *= prime
		}
	}
	return h
}
