// Package agent is the LLM side of Tavern without an LLM client: the
// [Model] interface, the toolsets with their JSON schemas, the prompts,
// and the run loop ([Runner.Run]) that plays one turn: the model calls
// tools, the tools call the engine on the turn's copy of the state, and
// the model ends the turn with one output tool.
//
// Start with [Runner.Run] and [Turn]. Models live in packages of their own
// and plug in behind [Model]: internal/openai (the openai-go adapter) and
// internal/offline (the rules narrator); cmd/server picks one. Nothing
// here depends on which model runs.
//
// Beside the run loop: [NewNarrativeTools] and [NewCombatTools] build each
// agent's [Toolset] from its dependencies; [WindowConfig] and [Sanitize]
// decide which history a turn sees (cut only at turn boundaries, then
// sanitised, seed 004); [Summarize] turns archived history into a
// [Memory], which the tools search_memories and recall_session_details
// read through a [MemoryIndex] (seed 001); [Logged] writes every call to a
// [CallLog] with its estimated cost; [DataAgent] is the operator's data
// agent (seed 003), its toolset from [NewDataTools], on the same loop.
package agent

import (
	"context"
	"encoding/json"
)

// Message is one chat message in the OpenAI Chat Completions format, which
// is also how histories are stored and exported.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant, tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	// Turn is the table turn the message belongs to. It is stored beside
	// the message (not in its JSON) and lets the history window cut only at
	// turn boundaries; 0 means unknown.
	Turn int `json:"-"`
}

// ToolCall is an assistant's request to run a tool.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and carries its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Request is one model call.
type Request struct {
	// Agent is "narrative" or "combat" (for logs and per-agent models).
	Agent    string
	System   string
	Messages []Message
	Tools    []ToolSpec
	// Turn, if set, is the context of the turn being played, the value the
	// <context> block of its user message was written from, so that a
	// model in this process (the offline narrator) reads it without
	// decoding that JSON on every call. Every call of the turn shares it:
	// read only. It is not part of the conversation: a model that sends
	// the messages elsewhere ignores it.
	Turn *TurnContext
	// OnDelta, if set, receives narration text as it streams.
	OnDelta func(text string)
}

// Usage counts the tokens of one call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

// Plus is the sum of two usages: the cost of two calls.
func (u Usage) Plus(v Usage) Usage {
	return Usage{PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens}
}

// Response is the assistant message a model returned.
type Response struct {
	Message Message
	Usage   Usage
}

// Model is the one interface to an LLM. Implementations must be safe for
// concurrent use (several tables run turns at once) and must honour ctx.
type Model interface {
	// Name identifies the model ("offline", "gpt-4o-mini"…).
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
