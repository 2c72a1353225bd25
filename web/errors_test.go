package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
		msg    string
	}{
		{engine.Errorf(engine.EINVALID, "bad seat"), 400, "bad_request", "bad seat"},
		{engine.Errorf(engine.ENOTFOUND, "no table"), 404, "not_found", "no table"},
		{fmt.Errorf("wrapped: %w", engine.Errorf(engine.ECONFLICT, "full")), 409, "conflict", "full"},
		{engine.Errorf(engine.EFORBIDDEN, "not yours"), 403, "forbidden", "not yours"},
		{engine.Errorf(engine.EUNAVAILABLE, "DM down"), 503, "unavailable", "DM down"},
		{engine.Errorf(engine.EINTERNAL, "disk on fire"), 500, "internal", "Internal error."},
		{errors.New("sql: /var/secret.db locked"), 500, "internal", "Internal error."},
	} {
		st, code, msg := status(tc.err)
		if st != tc.status || code != tc.code || msg != tc.msg {
			t.Errorf("status(%v) = %d %s %q, want %d %s %q", tc.err, st, code, msg, tc.status, tc.code, tc.msg)
		}
	}
}

// Only a table changing hands (PROTOCOL.md "Several nodes") promises a
// retry within a second; other 503s carry no Retry-After.
func TestRetryAfterOnlyForHandOver(t *testing.T) {
	s := newServer(nil, Config{Players: noPlayers{}})
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"changing hands", fmt.Errorf("load table t1: %w", errors.Join(store.ErrNotOwner, engine.Errorf(engine.EUNAVAILABLE, "The table is changing hands; try again."))), "1"},
		{"full disk", fmt.Errorf("commit: %w", store.ErrUnavailable), ""},
		{"model down", engine.Errorf(engine.EUNAVAILABLE, "The model did not answer; try again in a moment."), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			s.error(rec, httptest.NewRequest("GET", "/api/tables/t1", nil), tc.err)
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("status %d, want 503", rec.Code)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.want {
				t.Errorf("Retry-After %q, want %q", got, tc.want)
			}
		})
	}
}
