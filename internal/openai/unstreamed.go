package openai

import (
	"context"
	"fmt"

	sdk "github.com/openai/openai-go/v3"

	"tavern/internal/agent"
)

// The streaming modes of Config.Streaming.
const (
	// StreamAuto streams, and goes without streaming for requests with
	// tools once a server showed it sends tool calls only then: a streamed
	// answer to a request with tools that carried none is asked again
	// without streaming, and if that one carries tool calls the model
	// remembers it.
	StreamAuto = "auto"
	// StreamOn always streams.
	StreamOn = "on"
	// StreamOff never streams: narration reaches the players whole, at the
	// end of each call.
	StreamOff = "off"
)

// unstreamed reports whether a request with tools (or any, tools false)
// goes without streaming.
func (m *Model) unstreamed(tools bool) bool {
	switch m.cfg.Streaming {
	case StreamOff:
		return true
	case StreamOn:
		return false
	}
	return tools && m.toolsUnstreamed.Load()
}

// attemptUnstreamed is attempt without streaming: one answer, its
// narration handed to onDelta whole.
func (m *Model) attemptUnstreamed(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(string)) (agent.Response, error) {
	callCtx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
	defer cancel()
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{} // refused without stream by some servers
	resp, err := m.client.Chat.Completions.New(callCtx, params)
	if err != nil {
		if ctx.Err() == nil && callCtx.Err() != nil {
			return agent.Response{}, fmt.Errorf("%w after %s: %w", errCallTimeout, m.cfg.CallTimeout, err)
		}
		return agent.Response{}, err
	}
	if len(resp.Choices) == 0 {
		return agent.Response{}, errEmptyResponse
	}
	msg := resp.Choices[0].Message
	out := agent.Message{Role: "assistant", Content: msg.Content}
	for i, tc := range msg.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%s_%d", resp.ID, i)
		}
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: id, Type: "function",
			Function: agent.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	if onDelta != nil {
		if msg.Content != "" {
			onDelta(msg.Content)
		}
		for _, tc := range out.ToolCalls {
			var sc narrationScanner
			if text := sc.feed(tc.Function.Arguments); text != "" {
				onDelta(text)
			}
		}
	}
	u := resp.Usage
	return agent.Response{Message: out, Usage: agent.Usage{
		PromptTokens:     int(u.PromptTokens),
		CompletionTokens: int(u.CompletionTokens),
		CachedTokens:     int(u.PromptTokensDetails.CachedTokens),
	}}, nil
}
