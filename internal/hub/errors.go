package hub

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"tavern/internal/engine"
)

// Protocol error codes (PROTOCOL.md "Error codes"), for the websocket here
// and the HTTP API in package web.
const (
	CodeTooLarge     = "too_large"
	CodeBadRequest   = "bad_request"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeNotSeated    = "not_seated"
	CodeNotYourTurn  = "not_your_turn"
	CodeDead         = "dead"
	CodeBusy         = "busy"
	CodeRateLimited  = "rate_limited"
	CodeConflict     = "conflict"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
)

// protoError is an error the table answers in protocol terms directly
// (not_seated, not_your_turn, dead, busy: refusals of an action that have no
// engine code).
type protoError struct{ code, msg string }

func (e *protoError) Error() string { return e.msg }

func protoErr(code, msg string) error { return &protoError{code, msg} }

// ErrorCode maps err to its protocol error code and a message that is safe
// to show: the hub's own refusals keep their code, engine errors map by
// their engine code (EINVALID is bad_request), and every other error is
// CodeInternal with a generic message. Callers log the internal ones; their
// text never reaches a client. It is the one mapping from errors to the
// protocol, for the websocket and the HTTP API.
func ErrorCode(err error) (code, message string) {
	var pe *protoError
	if errors.As(err, &pe) {
		return pe.code, pe.msg
	}
	switch engine.ErrorCode(err) {
	case engine.EINVALID:
		return CodeBadRequest, engine.ErrorMessage(err)
	case engine.ENOTFOUND:
		return CodeNotFound, engine.ErrorMessage(err)
	case engine.ECONFLICT:
		return CodeConflict, engine.ErrorMessage(err)
	case engine.EFORBIDDEN:
		return CodeForbidden, engine.ErrorMessage(err)
	case engine.EUNAVAILABLE:
		return CodeUnavailable, engine.ErrorMessage(err)
	}
	return CodeInternal, "Internal error."
}

// HTTPStatus returns the HTTP status that answers a protocol error code
// (500 for a code it does not know).
func HTTPStatus(code string) int {
	switch code {
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden, CodeNotSeated:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict, CodeNotYourTurn, CodeDead, CodeBusy:
		return http.StatusConflict
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// writeHTTPError refuses a websocket upgrade with the protocol's error
// body, with code's status.
func writeHTTPError(w http.ResponseWriter, code, msg string) {
	WriteError(w, HTTPStatus(code), code, msg)
}

// ErrorBody is PROTOCOL.md's error body.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is an ErrorBody's code and message.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WriteError answers status with the protocol's error body: the one place
// the server writes it (the API's handlers, a refused websocket
// handshake, a cluster node's "try again").
func WriteError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// The status is sent; an encoding error can only be a broken
	// connection, which the client sees anyway.
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: ErrorDetail{Code: code, Message: message}})
}

// acceptRefusal is the http.ResponseWriter websocket.Accept writes to. The
// library refuses a bad handshake with http.Error, in plain text; this
// holds that answer back so that write can send it as the protocol's
// error body, with the library's status and message. Other statuses (the
// 101 of an upgrade) and the hijack pass through.
type acceptRefusal struct {
	http.ResponseWriter
	status int
	msg    []byte
}

func (a *acceptRefusal) WriteHeader(status int) {
	if status < 400 {
		a.ResponseWriter.WriteHeader(status)
		return
	}
	if a.status == 0 {
		a.status = status
	}
}

func (a *acceptRefusal) Write(p []byte) (int, error) {
	if a.status == 0 {
		return a.ResponseWriter.Write(p)
	}
	a.msg = append(a.msg, p...)
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the connection to hijack it.
func (a *acceptRefusal) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// write sends the refusal held back, if there is one.
func (a *acceptRefusal) write() {
	if a.status == 0 {
		return
	}
	// The library refuses a request that is no handshake (400, 405, 426),
	// a foreign origin (403) or a connection it cannot take over (5xx).
	code := CodeBadRequest
	if a.status == http.StatusForbidden {
		code = CodeForbidden
	} else if a.status >= 500 {
		code = CodeInternal
	}
	WriteError(a.ResponseWriter, a.status, code, strings.TrimSpace(string(a.msg)))
}
