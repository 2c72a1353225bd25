package openaitest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"tavern/internal/agent"
	"tavern/internal/openai/openaitest"
)

// The non-streaming JSON answer, read by the real client; usage with
// cached tokens once a long prefix repeats; every request recorded.
func TestJSONAnswerAndCachedTokens(t *testing.T) {
	fake := openaitest.New(t, func(r openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Content: "echo " + r.Messages[len(r.Messages)-1].Content,
			ToolCalls: []agent.ToolCall{openaitest.Call("respond", `{"narration":"x"}`)}}
	})
	client := openai.NewClient(option.WithBaseURL(fake.URL+"/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	system := strings.Repeat("You are the game master. ", 400) // ~10 KB: over 1024 tokens
	ask := func(q string) *openai.ChatCompletion {
		t.Helper()
		res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
			Model:    "fake",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system), openai.UserMessage(q)},
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := ask("one")
	if first.Choices[0].Message.Content != "echo one" || first.Choices[0].Message.ToolCalls[0].Function.Name != "respond" || first.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("answer %+v", first.Choices[0])
	}
	if first.Usage.PromptTokens < 2000 || first.Usage.PromptTokensDetails.CachedTokens != 0 {
		t.Errorf("first usage %+v", first.Usage)
	}
	second := ask("two")
	c := second.Usage.PromptTokensDetails.CachedTokens
	if c < 1024 || c%128 != 0 || c > second.Usage.PromptTokens {
		t.Errorf("second call cached %d of %d", c, second.Usage.PromptTokens)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[1].Stream || reqs[1].System != system || reqs[1].Messages[0].Content != "two" || reqs[1].Usage.CachedTokens != int(c) {
		t.Fatalf("requests %+v", reqs)
	}
	if !strings.Contains(string(reqs[1].Response), `"chat.completion"`) {
		t.Errorf("response not recorded: %s", reqs[1].Response)
	}
}

// Error replies carry OpenAI's error body and status.
func TestErrorReply(t *testing.T) {
	fake := openaitest.New(t, nil)
	fake.Push(openaitest.Reply{Status: 429, Error: "slow down", RetryAfter: "1"})
	client := openai.NewClient(option.WithBaseURL(fake.URL+"/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "fake", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Message != "slow down" || apiErr.Response.Header.Get("Retry-After") != "1" {
		t.Fatalf("err %#v", err)
	}
}
