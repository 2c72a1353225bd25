package web

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"tavern/internal/hub"
	"tavern/internal/store"
)

// apiError is an error the handlers produce themselves, already in protocol
// terms. A zero status is the code's own (hub.HTTPStatus); only an answer
// that is not, such as 405 Method Not Allowed, sets it.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badRequest(msg string) *apiError {
	return &apiError{code: hub.CodeBadRequest, message: msg}
}

// status maps err to an HTTP status, a protocol code and a user-safe
// message: the handlers' own *apiError as it is, a body over maxBody as
// too_large, and anything else through the hub's one mapping
// (hub.ErrorCode, hub.HTTPStatus), where an error that is neither a hub
// refusal nor an *engine.Error is internal and its text never reaches the
// client.
func status(err error) (int, string, string) {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.status == 0 {
			return hub.HTTPStatus(ae.code), ae.code, ae.message
		}
		return ae.status, ae.code, ae.message
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, hub.CodeTooLarge, "Request body too large."
	}
	code, msg := hub.ErrorCode(err)
	return hub.HTTPStatus(code), code, msg
}

// error writes err as the protocol's error body, logging internal errors.
func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	st, code, msg := status(err)
	if errors.Is(err, store.ErrNotOwner) {
		// PROTOCOL.md "Several nodes": a table changing hands is served
		// again within a second. Other 503s (a full disk, the model down)
		// promise no such thing.
		w.Header().Set("Retry-After", "1")
	}
	if st >= 500 {
		level := slog.LevelError
		if st == http.StatusServiceUnavailable {
			level = slog.LevelWarn
		}
		s.log.LogAttrs(r.Context(), level, "request failed",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("err", err))
	}
	hub.WriteError(w, st, code, msg)
}

// writeJSON writes v as the response body with status st.
func writeJSON(w http.ResponseWriter, st int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(st)
	// The status is sent; an encoding error can only be a broken
	// connection, which the client sees anyway.
	_ = json.NewEncoder(w).Encode(v)
}
