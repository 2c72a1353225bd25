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
	"unicode/utf8"

	"tavern/internal/dataset"
	"tavern/internal/engine"
	"tavern/internal/ident"
	"tavern/internal/store"
)

// AgentData names the data agent in requests and the LLM call log.
const AgentData = "data"

// MaxQuestion is the longest question the data agent takes, in
// characters (PROTOCOL.md: POST /api/admin/ask).
const MaxQuestion = 2000

// Conversations stores the data agent's conversations, so a follow-up
// question sees the earlier ones, also after a restart. internal/db
// satisfies it; implementations must be safe for concurrent use.
type Conversations interface {
	// Conversation returns the messages of conversation id, oldest
	// first, or an ENOTFOUND *engine.Error if there is none.
	Conversation(ctx context.Context, id string) ([]store.AgentMessage, error)
	// AppendConversation adds msgs to conversation id, creating it.
	AppendConversation(ctx context.Context, id string, msgs []store.AgentMessage) error
	ConversationList
}

// ConversationList lists the stored conversations (part of
// Conversations).
type ConversationList interface {
	// AskConversations lists at most limit conversations, the most
	// recently updated first.
	AskConversations(ctx context.Context, limit int) ([]store.AskConversation, error)
}

// DataAgent answers the operator's questions about the server's own
// database (seed 003): with a model, the run loop of the game
// agents over the toolset of [NewDataTools] — the model queries the
// curated views, draws a chart and ends with the answer tool (or a final
// text message); an invalid call goes back to the model as an error, up
// to Retries times, after which the agent gives up with an answer that
// says why. Without a model, the offline analyst answers. Either way the
// question and its answer join the conversation.
//
// Set the fields before the first Ask; DataAgent is then safe for
// concurrent use and must not be copied.
type DataAgent struct {
	// Model answers when set (wrap it in Logged for the call log); nil
	// means the offline analyst answers.
	Model Model
	// Data is the read-only data the tools query. Required.
	Data DataSource
	// Offline answers when Model is nil.
	Offline *dataset.Analyst
	// Conversations stores the conversations. Required.
	Conversations Conversations
	// Retries is how many refused or invalid calls a question tolerates
	// (default 3); the next one ends it with an explaining answer.
	Retries int
	// MaxToolCalls bounds the tool calls of one question (default 12).
	MaxToolCalls int
	// Timeout bounds one question (default 2 minutes).
	Timeout time.Duration
	// History is how many earlier messages of the conversation the model
	// sees, cut at question boundaries (default 40).
	History int
	Log     *slog.Logger

	once  sync.Once
	tools *Toolset
}

func (a *DataAgent) toolset() *Toolset {
	a.once.Do(func() { a.tools = NewDataTools(DataDeps{Data: a.Data}) })
	return a.tools
}

// Ask answers question in conversation ("" starts a new one). progress,
// if set, hears each step as it happens (events dataset.EventSQL,
// EventRows and EventChart), on the caller's goroutine. Errors: EINVALID for an empty or
// too long question, ENOTFOUND for an unknown conversation, EUNAVAILABLE
// when the model fails and there is no offline analyst (with one, it
// answers, with a note); refused queries are not errors but steps.
func (a *DataAgent) Ask(ctx context.Context, conversation, question string, progress func(event string, step dataset.Step)) (dataset.Reply, error) {
	question = strings.TrimSpace(question)
	if question == "" {
		return dataset.Reply{}, engine.Errorf(engine.EINVALID, "Ask a question.")
	}
	if n := utf8.RuneCountInString(question); n > MaxQuestion {
		return dataset.Reply{}, engine.Errorf(engine.EINVALID, "The question is %d characters long; ask in at most %d.", n, MaxQuestion)
	}
	var history []Message
	if conversation == "" {
		conversation = ident.New("q-")
	} else {
		rows, err := a.Conversations.Conversation(ctx, conversation)
		if err != nil {
			return dataset.Reply{}, err
		}
		history = DecodeMessages(rows)
	}
	turn := 1
	if len(history) > 0 {
		turn = history[len(history)-1].Turn + 1
	}
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	// The call log ties each model call to its question, so that the
	// operator's history view lists the calls under it.
	ctx = WithTurn(ctx, AskTurn(conversation, turn))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run := &DataRun{Progress: progress}
	var msgs []Message
	var answer string
	var err error
	offline, note := a.Model == nil, ""
	if offline {
		answer, msgs, err = a.offline(ctx, run, question, turn)
	} else {
		answer, msgs, err = a.play(ctx, run, a.window(history), question, turn)
		// PROTOCOL.md "Operator, continued": when the model fails, the
		// offline analyst answers, and says so.
		if engine.ErrorCode(err) == engine.EUNAVAILABLE && a.Offline != nil {
			run = &DataRun{Progress: progress}
			offline, note = true, "The model did not answer, so the offline analyst answered instead."
			answer, msgs, err = a.offline(ctx, run, question, turn)
		}
	}
	if err != nil {
		return dataset.Reply{}, err
	}
	rows := make([]store.AgentMessage, len(msgs))
	for i, m := range msgs {
		body, _ := json.Marshal(m)
		rows[i] = store.AgentMessage{Agent: AgentData, Turn: m.Turn, Body: body}
	}
	if err := a.Conversations.AppendConversation(context.WithoutCancel(ctx), conversation, rows); err != nil {
		return dataset.Reply{}, fmt.Errorf("store conversation %s: %w", conversation, err)
	}
	reply := dataset.Reply{Conversation: conversation, Question: question, Answer: answer, Steps: run.Steps, ChartSVG: run.ChartSVG, Offline: offline, Note: note}
	if reply.Steps == nil {
		reply.Steps = []dataset.Step{}
	}
	reply.Bound(dataset.MaxResultBytes)
	return reply, nil
}

// offline answers with the analyst; the conversation keeps the question
// and the answer.
func (a *DataAgent) offline(ctx context.Context, run *DataRun, question string, turn int) (string, []Message, error) {
	ans, err := a.Offline.Ask(ctx, question)
	if err != nil {
		return "", nil, fmt.Errorf("offline analyst: %w", err)
	}
	for _, s := range ans.Steps() {
		if s.Kind == dataset.StepQuery {
			run.report(dataset.EventSQL, dataset.Step{Kind: s.Kind, SQL: s.SQL, Description: s.Description})
			run.step(dataset.EventRows, s)
			continue
		}
		run.step(dataset.EventChart, s)
		run.ChartSVG = s.SVG
	}
	msgs := []Message{{Role: "user", Content: question, Turn: turn}}
	if ans.Result != nil && ans.SQL != "" {
		// The query is kept as the model would have made it, so a reopened
		// conversation shows its SQL and a model taking it up later sees
		// what was read.
		args, _ := json.Marshal(map[string]string{"sql": ans.SQL, "description": ans.Shape})
		id := ident.New("call_")
		msgs = append(msgs,
			Message{Role: "assistant", Turn: turn, ToolCalls: []ToolCall{{ID: id, Type: "function", Function: FunctionCall{Name: "query_data", Arguments: string(args)}}}},
			Message{Role: "tool", Turn: turn, ToolCallID: id, Content: ans.Result.Text(20, 4<<10)})
	}
	msgs = append(msgs, Message{Role: "assistant", Content: ans.Text, Turn: turn})
	return ans.Text, msgs, nil
}

// window is the end of the conversation the model sees: whole questions,
// at most History messages (the last question always), sanitised.
func (a *DataAgent) window(history []Message) []Message {
	max := a.History
	if max <= 0 {
		max = 40
	}
	turns := Turns(history)
	start, n := len(turns), 0
	for start > 0 && n+len(turns[start-1]) <= max {
		start--
		n += len(turns[start])
	}
	var out []Message
	for _, t := range turns[start:] {
		out = append(out, t...)
	}
	return Sanitize(out, a.Log)
}

// play runs the model on the question with the game agents' loop (play
// in run.go): tool calls run, their results or errors go back, until the
// answer tool or a final text message. After more than Retries refused or
// invalid calls, or too many calls, it gives up with an answer saying why.
func (a *DataAgent) play(ctx context.Context, run *DataRun, history []Message, question string, turn int) (string, []Message, error) {
	retries, maxCalls := a.Retries, a.MaxToolCalls
	if retries <= 0 {
		retries = 3
	}
	if maxCalls <= 0 {
		maxCalls = 12
	}
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	desc, err := a.Data.Describe(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("describe the views: %w", err)
	}
	system, tools := DataPrompt(desc.Text()), a.toolset()
	p := &play{turn: &Turn{No: turn}, tools: tools, tc: &ToolContext{Data: run}, maxCalls: maxCalls, log: log,
		msgs: []Message{{Role: "user", Content: question, Turn: turn}}}
	giveUp := func(why string) (string, []Message, error) {
		answer := why
		if last := lastToolError(p.msgs); last != "" {
			answer += " The last refusal: " + last
		}
		answer += " Rephrase the question, or ask about the views listed on this page."
		p.msgs = append(p.msgs, Message{Role: "assistant", Content: answer, Turn: turn})
		return answer, p.msgs, nil
	}
	for {
		if p.errs > retries {
			return giveUp(fmt.Sprintf("I could not answer this: %d of my attempts were refused or invalid, and I stop after %d retries.", p.errs, retries))
		}
		msgs := append(append(make([]Message, 0, len(history)+len(p.msgs)), history...), p.msgs...)
		resp, err := a.Model.Complete(ctx, Request{Agent: AgentData, System: system, Messages: msgs, Tools: tools.Specs()})
		if err != nil {
			switch {
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				return giveUp("I ran out of time before I could answer.")
			case ctx.Err() != nil:
				return "", nil, ctx.Err()
			}
			log.Warn("data agent: model failed", "err", err)
			return "", nil, engine.Errorf(engine.EUNAVAILABLE, "The model did not answer; try again in a moment.")
		}
		m := resp.Message
		if len(m.ToolCalls) == 0 && strings.TrimSpace(m.Content) != "" {
			// A final text message is the answer too (seed 003's
			// result.data), as most models end.
			m.Role, m.Turn = "assistant", turn
			p.msgs = append(p.msgs, m)
			return strings.TrimSpace(m.Content), p.msgs, nil
		}
		p.answer(ctx, m)
		if p.tc.Output != nil {
			return p.tc.Output.Narration, p.msgs, nil
		}
		if p.calls > maxCalls {
			return giveUp(fmt.Sprintf("I could not answer this within %d tool calls.", maxCalls))
		}
	}
}

// lastToolError returns the last error a tool sent back, without its
// "Error: " prefix, or "".
func lastToolError(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" && strings.HasPrefix(msgs[i].Content, "Error: ") {
			return strings.TrimPrefix(msgs[i].Content, "Error: ")
		}
	}
	return ""
}
