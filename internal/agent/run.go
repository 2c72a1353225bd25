package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// Runner plays turns. Its exported fields are read-only after
// construction (it builds each agent's toolset from them on first use);
// it is safe for concurrent use and must not be copied.
type Runner struct {
	Narrative Model
	Combat    Model
	// Retries is how many invalid tool calls or outputs a turn tolerates
	// (the error goes back to the model each time). Default 3.
	Retries int
	// MaxToolCalls bounds the tool calls of one turn. Default 16.
	MaxToolCalls int
	// TurnTimeout bounds a whole turn. Default 90s.
	TurnTimeout time.Duration
	Log         *slog.Logger
	// Memory, if set, gives both agents the tools search_memories and
	// recall_session_details over the memories of the turn's table (whose
	// id the context carries: see WithTable).
	Memory MemoryIndex
	// Summary is the model that summarises archived history; nil or the
	// offline narrator means extractive summaries.
	Summary Model
	// Window shapes the history each turn sees (zero: the defaults).
	Window WindowConfig
	// Limits bound what one turn's tools may create or grant (zero
	// fields: DefaultLimits).
	Limits Limits
	// Budget, if set with Offline, is asked before each turn: a table
	// over its daily model budget is played by Offline (the offline
	// narrator) until the next UTC day, and told so once.
	Budget  *Budget
	Offline Model

	once                        sync.Once
	narrativeTools, combatTools *Toolset
}

// toolset returns the toolset of agentName, built on first use from the
// runner's memory index and limits. Built once, so the tool schemas are
// byte-identical from call to call.
func (r *Runner) toolset(agentName string) *Toolset {
	r.once.Do(func() {
		deps := ToolDeps{Memory: r.Memory, Limits: r.Limits}
		r.narrativeTools, r.combatTools = NewNarrativeTools(deps), NewCombatTools(deps)
	})
	if agentName == engine.AgentCombat {
		return r.combatTools
	}
	return r.narrativeTools
}

// Summarize makes the memory of an archived block of agentName's history
// with the runner's summary model (see the package function Summarize).
func (r *Runner) Summarize(ctx context.Context, agentName string, block []Message) store.Memory {
	return Summarize(ctx, r.Summary, agentName, block, r.Log)
}

// Result is what a turn produced, to be committed in one transaction.
type Result struct {
	Agent    string
	Output   Output
	Events   []engine.Event
	Messages []Message
	Usage    Usage
	// budgetNotice: Events carry the budget notice (see Runner.Told).
	budgetNotice bool
}

// ErrTurnFailed is returned (wrapped) when the model could not finish a
// valid turn; nothing of the turn may be committed.
var ErrTurnFailed = errors.New("turn failed")

// Run plays one turn on t.State (which it mutates: pass a copy). On error
// the caller must discard t.State.
func (r *Runner) Run(ctx context.Context, t *Turn) (Result, error) {
	agentName := t.AgentName()
	model := r.Narrative
	if agentName == engine.AgentCombat {
		model = r.Combat
	}
	model, budget := r.budgetModel(ctx, model)
	retries, maxCalls, timeout := r.Retries, r.MaxToolCalls, r.TurnTimeout
	if retries == 0 {
		retries = 3
	}
	if maxCalls == 0 {
		maxCalls = 16
	}
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	turnCtx := t.context()
	// The turn's messages: its user message, then room for two calls and
	// their results, which most turns make.
	turnMsgs := make([]Message, 0, 5)
	turnMsgs = append(turnMsgs, Message{Role: "user", Content: t.userMessage(&turnCtx), Turn: t.No})
	p := &play{turn: t, tools: r.toolset(agentName), maxCalls: maxCalls, log: r.Log,
		tc: &ToolContext{Turn: t, State: t.State, Dice: t.Dice}, msgs: turnMsgs}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	res := Result{Agent: agentName}
	system, specs := SystemPrompt(agentName, t.Adventure), p.tools.Specs()
	fail := func(format string, args ...any) (Result, error) {
		return Result{}, fmt.Errorf("%w: %s", ErrTurnFailed, fmt.Sprintf(format, args...))
	}
	if model == nil {
		return fail("no model is configured for the %s agent", agentName)
	}
	// Each call sends the history and the turn so far; the turn's messages
	// only grow, so one buffer serves every call (what an earlier call was
	// given is rewritten with the same messages). Room for the turn message
	// and three calls with their results: most turns never regrow it.
	msgs := make([]Message, 0, len(t.History)+8)
	msgs = append(msgs, t.History...)
	for p.tc.Output == nil {
		if p.errs > retries {
			return fail("%d invalid responses from the model", p.errs)
		}
		msgs = append(msgs[:len(t.History)], p.msgs...)
		resp, err := model.Complete(ctx, Request{Agent: agentName, System: system, Messages: msgs, Tools: specs, Turn: &turnCtx, OnDelta: t.OnDelta})
		if err != nil {
			return Result{}, fmt.Errorf("%w: model: %w", ErrTurnFailed, err)
		}
		res.Usage = res.Usage.Plus(resp.Usage)
		p.answer(ctx, resp.Message)
		if p.tc.Output == nil && p.calls > maxCalls {
			return fail("more than %d tool calls", maxCalls)
		}
	}
	res.Output = *p.tc.Output
	res.Events = p.tc.Events
	if budget.Notice {
		res.Events = append([]engine.Event{engine.SystemEvent(SystemBudget,
			"The DM's model budget for today is spent ("+strings.TrimPrefix(budget.Reason, "the ")+
				"): the offline narrator plays this table until midnight UTC.")}, res.Events...)
		res.budgetNotice = true
	}
	res.Messages = p.msgs
	return res, nil
}

// play is one turn in progress: the messages it added to the history, the
// tool calls made and the invalid ones among them.
type play struct {
	turn        *Turn
	tools       *Toolset
	tc          *ToolContext
	log         *slog.Logger
	maxCalls    int
	msgs        []Message
	errs, calls int
}

// answer takes the model's message into the turn: its tool calls run and
// their results follow it; a message without any is told to end the turn.
func (p *play) answer(ctx context.Context, am Message) {
	am.Role = "assistant"
	am.Turn = p.turn.No
	if am.Content != "" || len(am.ToolCalls) > 0 {
		// An empty answer is not kept: the API refuses empty assistant
		// messages.
		p.msgs = append(p.msgs, am)
	}
	if len(am.ToolCalls) == 0 {
		p.errs++
		p.msgs = append(p.msgs, Message{Role: "user", Turn: p.turn.No, Content: fmt.Sprintf(
			"You must end the turn by calling one output tool: %s.", strings.Join(p.tools.OutputNames(), " or "))})
		return
	}
	for _, call := range am.ToolCalls {
		p.calls++
		p.msgs = append(p.msgs, Message{Role: "tool", ToolCallID: call.ID, Content: p.run(ctx, call), Turn: p.turn.No})
	}
}

// run runs one tool call and returns the text the model reads back.
func (p *play) run(ctx context.Context, call ToolCall) string {
	tool, ok := p.tools.Get(call.Function.Name)
	switch {
	case p.tc.Output != nil:
		return "Ignored: the turn has already ended."
	case p.calls > p.maxCalls:
		return "Ignored: too many tool calls this turn."
	case !ok:
		p.errs++
		return fmt.Sprintf("Unknown tool %q. Available tools: %s.", call.Function.Name, strings.Join(p.tools.Names(), ", "))
	}
	out, err := tool.Run(ctx, p.tc, json.RawMessage(call.Function.Arguments))
	if err != nil {
		p.errs++
		if engine.ErrorCode(err) == engine.EINTERNAL {
			p.log.Error("tool failed", "tool", tool.Name, "err", err)
		}
		return "Error: " + engine.ErrorMessage(err)
	}
	return out
}
