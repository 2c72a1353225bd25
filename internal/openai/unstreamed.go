package openai

import (
	"context"

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
	c, err := m.client.Chat.Completions.New(callCtx, params)
	if err != nil {
		if terr := m.timedOut(ctx, callCtx, err); terr != nil {
			return agent.Response{}, terr
		}
		return agent.Response{}, err
	}
	resp, err := response(*c)
	if err != nil {
		return agent.Response{}, err
	}
	if onDelta != nil {
		if resp.Message.Content != "" {
			onDelta(resp.Message.Content)
		}
		for _, tc := range resp.Message.ToolCalls {
			var sc narrationScanner
			if text := sc.feed(tc.Function.Arguments); text != "" {
				onDelta(text)
			}
		}
	}
	return resp, nil
}
