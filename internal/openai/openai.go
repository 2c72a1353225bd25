// Package openai is the OpenAI adapter: an agent.Model ([Model]) backed by
// the Chat Completions API through github.com/openai/openai-go, with
// tools, streaming (narration forwarded as it arrives), cached-token
// usage, a deadline per attempt and retries with backoff. It reaches
// OpenAI and every compatible server (Ollama, vLLM, llama.cpp, LM Studio,
// OpenRouter) through the base URL.
//
// Start with [New], or [ModelsFromEnv], which reads the per-agent models
// from the environment. The fake Chat Completions server for tests is
// package openaitest.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"tavern/internal/agent"
)

// DefaultModel is the model used when TAVERN_MODEL is not set.
const DefaultModel = "gpt-4o-mini"

// DefaultBaseURL is OpenAI's API. Compatible servers (Ollama, vLLM,
// llama.cpp, LM Studio, OpenRouter) are reached through OPENAI_BASE_URL,
// which includes the /v1.
const DefaultBaseURL = "https://api.sdk.com/v1"

// Config configures a [Model]. Zero fields take the defaults
// documented on each.
type Config struct {
	// APIKey is sent as a bearer token. Local servers usually need none.
	APIKey string
	// BaseURL includes the /v1 (default DefaultBaseURL).
	BaseURL string
	// Model is the model id sent with each call (default DefaultModel).
	Model string
	// CallTimeout bounds one attempt, from the request to the last streamed
	// chunk (default 60s). The caller's ctx bounds all attempts together.
	CallTimeout time.Duration
	// FirstTokenTimeout bounds the wait for the first streamed chunk of an
	// attempt (default 20s), and IdleTimeout the wait between two chunks
	// (default 15s): a request that hangs is abandoned and retried long
	// before CallTimeout (one hung request froze a table for a
	// minute).
	FirstTokenTimeout, IdleTimeout time.Duration
	// MaxAttempts bounds the attempts of one call; 408, 409, 429, 5xx,
	// timeouts and broken connections are retried (default 4).
	MaxAttempts int
	// Backoff returns the wait before attempt n+1 after attempt n failed
	// (default: 500ms doubling to at most 8s, with jitter). A Retry-After
	// header lengthens it, up to 30s.
	Backoff func(n int) time.Duration
	// Streaming is StreamOn (default), StreamAuto or StreamOff: whether
	// calls stream, for servers that send tool calls only without it.
	Streaming string
	// HTTPClient, if set, replaces the SDK's default client.
	HTTPClient *http.Client
	// Log receives a warning for each retried attempt; nil discards.
	Log *slog.Logger
}

// Model is an agent.Model backed by the Chat Completions API through
// github.com/openai/openai-go: tools, streaming (narration forwarded to
// Request.OnDelta as it arrives), usage with cached prompt tokens, a
// deadline per attempt and retries with backoff. It is safe for concurrent
// use.
type Model struct {
	client sdk.Client
	cfg    Config
	log    *slog.Logger
	// toolsUnstreamed: the server sends tool calls only without streaming
	// (StreamAuto found it).
	toolsUnstreamed atomic.Bool
}

// New returns a model for cfg. It does not contact the server.
func New(cfg Config) *Model {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 60 * time.Second
	}
	if cfg.FirstTokenTimeout <= 0 {
		cfg.FirstTokenTimeout = 20 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 15 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
	}
	if cfg.Streaming == "" {
		cfg.Streaming = StreamOn
	}
	key := cfg.APIKey
	if key == "" {
		key = "none" // local servers ignore it; the SDK wants one
	}
	// Retries are ours (they cover broken streams and per-attempt
	// timeouts too), so the SDK's own are off.
	opts := []option.RequestOption{
		option.WithBaseURL(strings.TrimSuffix(cfg.BaseURL, "/") + "/"),
		option.WithAPIKey(key),
		option.WithMaxRetries(0),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Model{client: sdk.NewClient(opts...), cfg: cfg, log: log}
}

// Name implements agent.Model: the model id.
func (m *Model) Name() string { return m.cfg.Model }

func defaultBackoff(n int) time.Duration {
	d := 500 * time.Millisecond << min(n-1, 4)
	d = min(d, 8*time.Second)
	return d + rand.N(d/4+1)
}

// errCallTimeout marks an attempt that ran out of its CallTimeout while the
// caller's context was still alive.
var errCallTimeout = errors.New("call timed out")

// errNoFirstToken and errStalled mark an attempt abandoned because the
// server sent nothing for FirstTokenTimeout, or stopped for IdleTimeout in
// the middle of its answer.
var (
	errNoFirstToken = errors.New("no first chunk in time")
	errStalled      = errors.New("stream stalled")
)

// errEmptyResponse marks a stream that ended without any choice.
var errEmptyResponse = errors.New("empty response")

// Complete implements agent.Model. It streams the answer, forwarding narration
// (assistant text and the "narration" argument of tool calls) to
// req.OnDelta while it arrives, and retries transient failures. The error
// after the last attempt wraps the last failure (an *openai.Error of the SDK for HTTP
// errors, so callers can read its StatusCode).
func (m *Model) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params := m.params(req)
	// Once an attempt has streamed text, its retries stream nothing: the
	// players would read the same narration twice (or two versions of
	// it). The turn's final narration event still carries the text.
	onDelta, streamed := req.OnDelta, false
	if onDelta != nil {
		onDelta = func(s string) {
			streamed = true
			req.OnDelta(s)
		}
	}
	for n := 1; ; n++ {
		if streamed {
			onDelta = nil
		}
		var resp agent.Response
		var err error
		if m.unstreamed(len(req.Tools) > 0) {
			resp, err = m.attemptUnstreamed(ctx, params, onDelta)
		} else if resp, err = m.attempt(ctx, params, onDelta); err == nil && m.cfg.Streaming != StreamOn &&
			len(req.Tools) > 0 && len(resp.Message.ToolCalls) == 0 {
			// Tools offered and none called: a server that sends tool
			// calls only without streaming looks like this. Ask again so.
			// Both calls are paid for; if the second fails, the streamed
			// answer stands (the players have read it already).
			if again, aerr := m.attemptUnstreamed(ctx, params, nil); aerr == nil {
				if len(again.Message.ToolCalls) > 0 && !m.toolsUnstreamed.Swap(true) {
					m.log.Warn("the model server sends tool calls only without streaming: calls with tools no longer stream", "model", m.cfg.Model)
				}
				again.Usage = again.Usage.Plus(resp.Usage)
				resp = again
			} else {
				m.log.Warn("asking again without streaming failed: the streamed answer stands", "model", m.cfg.Model, "agent", req.Agent, "err", aerr)
			}
		}
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return agent.Response{}, fmt.Errorf("openai %s: %w", m.cfg.Model, err)
		}
		if !retryable(err) || n >= m.cfg.MaxAttempts {
			return agent.Response{}, fmt.Errorf("openai %s: %d attempt(s): %w", m.cfg.Model, n, err)
		}
		delay := max(m.cfg.Backoff(n), retryAfter(err))
		m.log.Warn("model call failed, retrying", "model", m.cfg.Model, "agent", req.Agent, "attempt", n, "in", delay, "err", err)
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return agent.Response{}, fmt.Errorf("openai %s: %w (after %w)", m.cfg.Model, ctx.Err(), err)
		}
	}
}

func (m *Model) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(string)) (agent.Response, error) {
	callCtx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
	defer cancel()
	// The watchdog cancels the attempt when the next chunk is late: the
	// first after FirstTokenTimeout, any later one after IdleTimeout.
	actx, stall := context.WithCancelCause(callCtx)
	defer stall(nil)
	watchdog := time.AfterFunc(m.cfg.FirstTokenTimeout, func() {
		stall(fmt.Errorf("%w (%s)", errNoFirstToken, m.cfg.FirstTokenTimeout))
	})
	defer watchdog.Stop()
	stream := m.client.Chat.Completions.NewStreaming(actx, params)
	defer stream.Close()
	var acc sdk.ChatCompletionAccumulator
	scanners := map[int64]*narrationScanner{}
	first := true
	for stream.Next() {
		if first {
			first = false
			watchdog.Stop()
			watchdog = time.AfterFunc(m.cfg.IdleTimeout, func() {
				stall(fmt.Errorf("%w (%s without a chunk)", errStalled, m.cfg.IdleTimeout))
			})
		} else {
			watchdog.Reset(m.cfg.IdleTimeout)
		}
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return agent.Response{}, fmt.Errorf("inconsistent stream chunk %q", chunk.ID)
		}
		if onDelta == nil {
			continue
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				onDelta(ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				sc := scanners[tc.Index]
				if sc == nil {
					sc = &narrationScanner{}
					scanners[tc.Index] = sc
				}
				if text := sc.feed(tc.Function.Arguments); text != "" {
					onDelta(text)
				}
			}
		}
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() == nil {
			if cause := context.Cause(actx); errors.Is(cause, errNoFirstToken) || errors.Is(cause, errStalled) {
				return agent.Response{}, fmt.Errorf("%w: %w", cause, err)
			}
		}
		if terr := m.timedOut(ctx, callCtx, err); terr != nil {
			return agent.Response{}, terr
		}
		return agent.Response{}, streamError(err)
	}
	return response(acc.ChatCompletion)
}

// timedOut marks err as errCallTimeout when callCtx, the attempt's own
// deadline, ended it while the caller's ctx was still alive; else nil.
func (m *Model) timedOut(ctx, callCtx context.Context, err error) error {
	if ctx.Err() == nil && callCtx.Err() != nil {
		return fmt.Errorf("%w after %s: %w", errCallTimeout, m.cfg.CallTimeout, err)
	}
	return nil
}

// response converts a completion, streamed and accumulated or not, into
// the agent's form: the first choice and the usage.
func response(c sdk.ChatCompletion) (agent.Response, error) {
	if len(c.Choices) == 0 {
		return agent.Response{}, errEmptyResponse
	}
	msg := c.Choices[0].Message
	out := agent.Message{Role: "assistant", Content: msg.Content}
	for i, tc := range msg.ToolCalls {
		id := tc.ID
		if id == "" { // some compatible servers leave it out
			id = fmt.Sprintf("call_%s_%d", c.ID, i)
		}
		out.ToolCalls = append(out.ToolCalls, agent.ToolCall{ID: id, Type: "function",
			Function: agent.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	u := c.Usage
	return agent.Response{Message: out, Usage: agent.Usage{
		PromptTokens:     int(u.PromptTokens),
		CompletionTokens: int(u.CompletionTokens),
		CachedTokens:     int(u.PromptTokensDetails.CachedTokens),
	}}, nil
}

// params builds the request. The system prompt and the tool schemas come
// first and are rendered the same way on every call (encoding/json sorts
// map keys), so the prompt prefix stays byte-identical and cacheable.
func (m *Model) params(req agent.Request) sdk.ChatCompletionNewParams {
	msgs := make([]sdk.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, sdk.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		msgs = append(msgs, messageParam(msg))
	}
	p := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.cfg.Model),
		Messages:      msgs,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: sdk.String(t.Description),
			Parameters:  shared.FunctionParameters(t.Parameters),
		}))
	}
	return p
}

func messageParam(msg agent.Message) sdk.ChatCompletionMessageParamUnion {
	switch msg.Role {
	case "system":
		return sdk.SystemMessage(msg.Content)
	case "tool":
		return sdk.ToolMessage(msg.Content, msg.ToolCallID)
	case "assistant":
		var a sdk.ChatCompletionAssistantMessageParam
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(msg.Content)
		}
		for _, c := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Function.Name, Arguments: c.Function.Arguments},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return sdk.UserMessage(msg.Content)
	}
}

// retryable reports whether a failed attempt may succeed if repeated.
func retryable(err error) bool {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return retryableStatus(apiErr.StatusCode)
	}
	var chunkErr *StreamError
	if errors.As(err, &chunkErr) {
		return retryableStatus(chunkErr.Status)
	}
	var streamErr *ssestream.StreamError
	var netErr net.Error
	return errors.Is(err, errCallTimeout) || errors.Is(err, errNoFirstToken) || errors.Is(err, errStalled) || errors.Is(err, errEmptyResponse) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &streamErr) || errors.As(err, &netErr)
}

// retryAfter reads the server's Retry-After (or retry-after-ms) header, at
// most 30s.
func retryAfter(err error) time.Duration {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) || apiErr.Response == nil {
		return 0
	}
	h := apiErr.Response.Header
	var d time.Duration
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if s, err := strconv.ParseFloat(h.Get("Retry-After"), 64); err == nil {
		d = time.Duration(s * float64(time.Second))
	}
	return min(max(d, 0), 30*time.Second)
}

// Models is the OpenAI model of each agent, as configured by
// [ModelsFromEnv].
type Models struct {
	Narrative, Combat, Summary *Model
	// Data answers the operator's questions (the data agent).
	Data *Model
	// DM names the game master for the UI: the model ids (and the
	// server's host when it is not OpenAI's).
	DM string
}

// ModelsFromEnv reads the model configuration through getenv:
// OPENAI_API_KEY, OPENAI_BASE_URL, TAVERN_MODEL and the per-agent
// overrides TAVERN_MODEL_NARRATIVE, TAVERN_MODEL_COMBAT,
// TAVERN_MODEL_SUMMARY and TAVERN_MODEL_DATA. ok is false when neither a
// key nor a base URL is set: no server is configured, and the caller picks another model. base
// supplies the other Config fields (timeouts, retries, logger).
func ModelsFromEnv(getenv func(string) string, base Config) (ms Models, ok bool) {
	key, baseURL := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	if key == "" && baseURL == "" {
		return Models{}, false
	}
	def := getenv("TAVERN_MODEL")
	if def == "" {
		def = DefaultModel
	}
	pick := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	mk := func(model string) *Model {
		cfg := base
		cfg.APIKey, cfg.BaseURL, cfg.Model = key, baseURL, model
		return New(cfg)
	}
	ms = Models{
		Narrative: mk(pick("TAVERN_MODEL_NARRATIVE")),
		Combat:    mk(pick("TAVERN_MODEL_COMBAT")),
		Summary:   mk(pick("TAVERN_MODEL_SUMMARY")),
		Data:      mk(pick("TAVERN_MODEL_DATA")),
	}
	dm := ms.Narrative.Name()
	if c := ms.Combat.Name(); c != dm {
		dm += ", combat: " + c
	}
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err == nil && u.Host != "" && u.Host != "api.openai.com" {
			dm += " @ " + u.Host
		}
	}
	ms.DM = dm
	return ms, true
}
