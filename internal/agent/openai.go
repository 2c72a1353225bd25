package agent

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
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// DefaultOpenAIModel is the model used when TAVERN_MODEL is not set.
const DefaultOpenAIModel = "gpt-4o-mini"

// DefaultBaseURL is OpenAI's API. Compatible servers (Ollama, vLLM,
// llama.cpp, LM Studio, OpenRouter) are reached through OPENAI_BASE_URL,
// which includes the /v1.
const DefaultBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an [OpenAI] model. Zero fields take the defaults
// documented on each.
type OpenAIConfig struct {
	// APIKey is sent as a bearer token. Local servers usually need none.
	APIKey string
	// BaseURL includes the /v1 (default DefaultBaseURL).
	BaseURL string
	// Model is the model id sent with each call (default DefaultOpenAIModel).
	Model string
	// CallTimeout bounds one attempt, from the request to the last streamed
	// chunk (default 60s). The caller's ctx bounds all attempts together.
	CallTimeout time.Duration
	// MaxAttempts bounds the attempts of one call; 408, 409, 429, 5xx,
	// timeouts and broken connections are retried (default 4).
	MaxAttempts int
	// Backoff returns the wait before attempt n+1 after attempt n failed
	// (default: 500ms doubling to at most 8s, with jitter). A Retry-After
	// header lengthens it, up to 30s.
	Backoff func(n int) time.Duration
	// HTTPClient, if set, replaces the SDK's default client.
	HTTPClient *http.Client
	// Log receives a warning for each retried attempt; nil discards.
	Log *slog.Logger
}

// OpenAI is a [Model] backed by the Chat Completions API through
// github.com/openai/openai-go: tools, streaming (narration forwarded to
// Request.OnDelta as it arrives), usage with cached prompt tokens, a
// deadline per attempt and retries with backoff. It is safe for concurrent
// use.
type OpenAI struct {
	client openai.Client
	cfg    OpenAIConfig
	log    *slog.Logger
}

// NewOpenAI returns a model for cfg. It does not contact the server.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = DefaultOpenAIModel
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 60 * time.Second
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.Backoff == nil {
		cfg.Backoff = defaultBackoff
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
	return &OpenAI{client: openai.NewClient(opts...), cfg: cfg, log: log}
}

// Name implements Model: the model id.
func (m *OpenAI) Name() string { return m.cfg.Model }

func defaultBackoff(n int) time.Duration {
	d := 500 * time.Millisecond << min(n-1, 4)
	d = min(d, 8*time.Second)
	return d + rand.N(d/4+1)
}

// errCallTimeout marks an attempt that ran out of its CallTimeout while the
// caller's context was still alive.
var errCallTimeout = errors.New("call timed out")

// errEmptyResponse marks a stream that ended without any choice.
var errEmptyResponse = errors.New("empty response")

// Complete implements Model. It streams the answer, forwarding narration
// (assistant text and the "narration" argument of tool calls) to
// req.OnDelta while it arrives, and retries transient failures. The error
// after the last attempt wraps the last failure (an *openai.Error for HTTP
// errors, so callers can read its StatusCode).
func (m *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
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
		resp, err := m.attempt(ctx, params, onDelta)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, fmt.Errorf("openai %s: %w", m.cfg.Model, err)
		}
		if !retryable(err) || n >= m.cfg.MaxAttempts {
			return Response{}, fmt.Errorf("openai %s: %d attempt(s): %w", m.cfg.Model, n, err)
		}
		delay := max(m.cfg.Backoff(n), retryAfter(err))
		m.log.Warn("model call failed, retrying", "model", m.cfg.Model, "agent", req.Agent, "attempt", n, "in", delay, "err", err)
		timer := time.NewTimer(delay)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return Response{}, fmt.Errorf("openai %s: %w (after %w)", m.cfg.Model, ctx.Err(), err)
		}
	}
}

func (m *OpenAI) attempt(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(string)) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, m.cfg.CallTimeout)
	defer cancel()
	stream := m.client.Chat.Completions.NewStreaming(actx, params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	scanners := map[int64]*narrationScanner{}
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return Response{}, fmt.Errorf("inconsistent stream chunk %q", chunk.ID)
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
		if actx.Err() != nil && ctx.Err() == nil {
			return Response{}, fmt.Errorf("%w after %s: %w", errCallTimeout, m.cfg.CallTimeout, err)
		}
		return Response{}, err
	}
	if len(acc.Choices) == 0 {
		return Response{}, errEmptyResponse
	}
	msg := acc.Choices[0].Message
	out := Message{Role: "assistant", Content: msg.Content}
	for i, tc := range msg.ToolCalls {
		id := tc.ID
		if id == "" { // some compatible servers leave it out
			id = fmt.Sprintf("call_%s_%d", acc.ID, i)
		}
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: id, Type: "function",
			Function: FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	u := acc.Usage
	return Response{Message: out, Usage: Usage{
		PromptTokens:     int(u.PromptTokens),
		CompletionTokens: int(u.CompletionTokens),
		CachedTokens:     int(u.PromptTokensDetails.CachedTokens),
	}}, nil
}

// params builds the request. The system prompt and the tool schemas come
// first and are rendered the same way on every call (encoding/json sorts
// map keys), so the prompt prefix stays byte-identical and cacheable.
func (m *OpenAI) params(req Request) openai.ChatCompletionNewParams {
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		msgs = append(msgs, messageParam(msg))
	}
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.cfg.Model),
		Messages:      msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(t.Parameters),
		}))
	}
	return p
}

func messageParam(msg Message) openai.ChatCompletionMessageParamUnion {
	switch msg.Role {
	case "system":
		return openai.SystemMessage(msg.Content)
	case "tool":
		return openai.ToolMessage(msg.Content, msg.ToolCallID)
	case "assistant":
		var a openai.ChatCompletionAssistantMessageParam
		if msg.Content != "" || len(msg.ToolCalls) == 0 {
			a.Content.OfString = openai.String(msg.Content)
		}
		for _, c := range msg.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Function.Name, Arguments: c.Function.Arguments},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return openai.UserMessage(msg.Content)
	}
}

// retryable reports whether a failed attempt may succeed if repeated.
func retryable(err error) bool {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		s := apiErr.StatusCode
		return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
	}
	var streamErr *ssestream.StreamError
	var netErr net.Error
	return errors.Is(err, errCallTimeout) || errors.Is(err, errEmptyResponse) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &streamErr) || errors.As(err, &netErr)
}

// retryAfter reads the server's Retry-After (or retry-after-ms) header, at
// most 30s.
func retryAfter(err error) time.Duration {
	var apiErr *openai.Error
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

// Models is the model of each agent, as configured by [ModelsFromEnv].
type Models struct {
	Narrative, Combat, Summary Model
	// DM names the game master for the UI: "offline", or the model ids
	// (and the server's host when it is not OpenAI's).
	DM string
	// Online is false when the offline narrator runs.
	Online bool
}

// ModelsFromEnv reads the model configuration through getenv:
// OPENAI_API_KEY, OPENAI_BASE_URL, TAVERN_MODEL and the per-agent
// overrides TAVERN_MODEL_NARRATIVE, TAVERN_MODEL_COMBAT and
// TAVERN_MODEL_SUMMARY. With neither a key nor a base URL it returns the
// offline narrator for every agent. base supplies the other OpenAIConfig
// fields (timeouts, retries, logger).
func ModelsFromEnv(getenv func(string) string, base OpenAIConfig) Models {
	key, baseURL := getenv("OPENAI_API_KEY"), getenv("OPENAI_BASE_URL")
	if key == "" && baseURL == "" {
		return Models{Narrative: Offline{}, Combat: Offline{}, Summary: Offline{}, DM: "offline"}
	}
	def := getenv("TAVERN_MODEL")
	if def == "" {
		def = DefaultOpenAIModel
	}
	pick := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	mk := func(model string) *OpenAI {
		cfg := base
		cfg.APIKey, cfg.BaseURL, cfg.Model = key, baseURL, model
		return NewOpenAI(cfg)
	}
	ms := Models{
		Narrative: mk(pick("TAVERN_MODEL_NARRATIVE")),
		Combat:    mk(pick("TAVERN_MODEL_COMBAT")),
		Summary:   mk(pick("TAVERN_MODEL_SUMMARY")),
		Online:    true,
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
	return ms
}
