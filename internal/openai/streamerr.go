package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/packages/ssestream"
)

// StreamError is an error the server sent inside a streamed answer: HTTP
// 200, then a chunk {"error": {"message", "type", "code"}}, as OpenAI and
// other servers report a failure met once the stream has begun. Status is
// the HTTP status it stands for, read from its code or type, so that it
// is retried and sorted (agent.ErrorKind reads the status in Error's text)
// as the same failure answered with that status would be.
type StreamError struct {
	Status              int
	Type, Code, Message string
}

func (e *StreamError) Error() string {
	what := e.Type
	if e.Code != "" && e.Code != e.Type {
		what = strings.TrimPrefix(what+" "+e.Code, " ")
	}
	return fmt.Sprintf("error inside the stream (as HTTP %d, %s): %s", e.Status, what, e.Message)
}

// streamError returns err as a *StreamError when it is the SDK's report of
// an error chunk, else err.
func streamError(err error) error {
	var se *ssestream.StreamError
	if !errors.As(err, &se) {
		return err
	}
	var body struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(se.Event.Data, &body) != nil {
		return err
	}
	e := &StreamError{Type: body.Error.Type, Message: body.Error.Message}
	code := strings.Trim(string(body.Error.Code), `"`)
	if code != "null" {
		e.Code = code
	}
	e.Status = statusOf(e.Code, e.Type, e.Message)
	return e
}

// statusOf reads the HTTP status an error chunk stands for: its numeric
// code, else the words of its code, type and message.
func statusOf(code, typ, msg string) int {
	if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
		return n
	}
	words := strings.ToLower(code + " " + typ + " " + msg)
	switch {
	case strings.Contains(words, "rate_limit") || strings.Contains(words, "rate limit") || strings.Contains(words, "quota") || strings.Contains(words, "too many requests"):
		return http.StatusTooManyRequests
	case strings.Contains(words, "timeout") || strings.Contains(words, "timed out"):
		return http.StatusGatewayTimeout
	case strings.Contains(words, "invalid_api_key") || strings.Contains(words, "authentication") || strings.Contains(words, "unauthorized"):
		return http.StatusUnauthorized
	case strings.Contains(words, "permission") || strings.Contains(words, "forbidden"):
		return http.StatusForbidden
	case strings.Contains(words, "invalid_request") || strings.Contains(words, "context_length"):
		return http.StatusBadRequest
	case strings.Contains(words, "overloaded") || strings.Contains(words, "unavailable"):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError // a failure of the server's, mid-answer
}

// retryableStatus reports whether a failure answered with HTTP status s may
// succeed if repeated.
func retryableStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}
