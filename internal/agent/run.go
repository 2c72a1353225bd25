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
func (r *Runner) Summarize(ctx context.Context, agentName string, block []Message) Memory {
	return Summarize(ctx, r.Summary, agentName, block, r.Log)
}

// Result is what a turn produced, to be committed in one transaction.
type Result struct {
	Agent    string
	Output   Output
	Events   []engine.Event
	Messages []Message
	Usage    Usage
}

// ErrTurnFailed is returned (wrapped) when the model could not finish a
// valid turn; nothing of the turn may be committed.
var ErrTurnFailed = errors.New("turn failed")

// Run plays one turn on t.State (which it mutates: pass a copy). On error
// the caller must discard t.State.
func (r *Runner) Run(ctx context.Context, t *Turn) (Result, error) {
	agentName := t.AgentName()
	model, reg := r.Narrative, r.toolset(agentName)
	if agentName == engine.AgentCombat {
		model = r.Combat
	}
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
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	tc := &ToolContext{Turn: t, State: t.State, Dice: t.Dice}
	res := Result{Agent: agentName}
	system := SystemPrompt(agentName, t.Adventure)
	newMsgs := []Message{{Role: "user", Content: t.userMessage(), Turn: t.No}}
	specs := reg.Specs()
	errs, calls := 0, 0
	fail := func(format string, args ...any) (Result, error) {
		return Result{}, fmt.Errorf("%w: %s", ErrTurnFailed, fmt.Sprintf(format, args...))
	}
	for tc.Output == nil {
		if errs > retries {
			return fail("%d invalid responses from the model", errs)
		}
		msgs := make([]Message, 0, len(t.History)+len(newMsgs))
		msgs = append(append(msgs, t.History...), newMsgs...)
		resp, err := model.Complete(ctx, Request{Agent: agentName, System: system, Messages: msgs, Tools: specs, OnDelta: t.OnDelta})
		if err != nil {
			return Result{}, fmt.Errorf("%w: model: %w", ErrTurnFailed, err)
		}
		res.Usage.PromptTokens += resp.Usage.PromptTokens
		res.Usage.CompletionTokens += resp.Usage.CompletionTokens
		res.Usage.CachedTokens += resp.Usage.CachedTokens
		am := resp.Message
		am.Role = "assistant"
		am.Turn = t.No
		if am.Content != "" || len(am.ToolCalls) > 0 {
			// An empty answer is not kept: the API refuses empty
			// assistant messages.
			newMsgs = append(newMsgs, am)
		}
		if len(am.ToolCalls) == 0 {
			errs++
			newMsgs = append(newMsgs, Message{Role: "user", Turn: t.No, Content: fmt.Sprintf(
				"You must end the turn by calling one output tool: %s.", strings.Join(reg.OutputNames(), " or "))})
			continue
		}
		for _, call := range am.ToolCalls {
			calls++
			var text string
			switch tool, ok := reg.Get(call.Function.Name); {
			case tc.Output != nil:
				text = "Ignored: the turn has already ended."
			case calls > maxCalls:
				text = "Ignored: too many tool calls this turn."
			case !ok:
				errs++
				text = fmt.Sprintf("Unknown tool %q. Available tools: %s.", call.Function.Name, strings.Join(reg.Names(), ", "))
			default:
				out, err := tool.Run(ctx, tc, json.RawMessage(call.Function.Arguments))
				if err != nil {
					errs++
					text = "Error: " + engine.ErrorMessage(err)
					if engine.ErrorCode(err) == engine.EINTERNAL {
						log.Error("tool failed", "tool", tool.Name, "err", err)
					}
				} else {
					text = out
				}
			}
			newMsgs = append(newMsgs, Message{Role: "tool", ToolCallID: call.ID, Content: text, Turn: t.No})
		}
		if tc.Output == nil && calls > maxCalls {
			return fail("more than %d tool calls", maxCalls)
		}
	}
	res.Output = *tc.Output
	res.Events = tc.Events
	res.Messages = newMsgs
	return res, nil
}
