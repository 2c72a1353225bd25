package engine

import (
	"errors"
	"fmt"
)

// Application error codes, mapped once to the protocol's error codes at the
// edge (hub.ErrorCode, whose codes web answers with HTTP statuses).
const (
	EINVALID     = "invalid"
	ENOTFOUND    = "not_found"
	ECONFLICT    = "conflict"
	EFORBIDDEN   = "forbidden"
	EUNAVAILABLE = "unavailable"
	EINTERNAL    = "internal"
)

// Error is Tavern's application error: a code callers branch on and a message
// that is safe to show to a user (or to a model, for tool errors).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and
// EINTERNAL otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// ErrorMessage returns the user-safe message of err, or a generic text for
// errors that are not *Error (their details are for the logs only).
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Internal error."
}
