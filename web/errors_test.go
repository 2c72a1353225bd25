package web

import (
	"errors"
	"fmt"
	"testing"

	"tavern/internal/engine"
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
