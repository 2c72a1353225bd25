package hub

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestErrorCode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		code, msg  string
		httpStatus int
	}{
		{"invalid", engine.Errorf(engine.EINVALID, "bad seat"), CodeBadRequest, "bad seat", http.StatusBadRequest},
		{"not found", engine.Errorf(engine.ENOTFOUND, "no table"), CodeNotFound, "no table", http.StatusNotFound},
		{"wrapped conflict", fmt.Errorf("sit: %w", engine.Errorf(engine.ECONFLICT, "full")), CodeConflict, "full", http.StatusConflict},
		{"forbidden", engine.Errorf(engine.EFORBIDDEN, "not yours"), CodeForbidden, "not yours", http.StatusForbidden},
		{"unavailable", engine.Errorf(engine.EUNAVAILABLE, "DM down"), CodeUnavailable, "DM down", http.StatusServiceUnavailable},
		{"engine internal", engine.Errorf(engine.EINTERNAL, "disk on fire"), CodeInternal, "Internal error.", http.StatusInternalServerError},
		{"plain error", errors.New("sql: /var/secret.db locked"), CodeInternal, "Internal error.", http.StatusInternalServerError},
		{"hub refusal", fmt.Errorf("act: %w", protoErr(CodeNotYourTurn, "It is Vesna's turn.")), CodeNotYourTurn, "It is Vesna's turn.", http.StatusConflict},
		{"not seated", protoErr(CodeNotSeated, "You have no seat."), CodeNotSeated, "You have no seat.", http.StatusForbidden},
		// A commit the store did not apply is to be sent again (a cluster's
		// fault tests saw these answered internal).
		{"fenced", fmt.Errorf("commit to table t1: held under epoch 3: %w", store.ErrFenced), CodeUnavailable, store.ErrFenced.Error(), http.StatusServiceUnavailable},
		{"chain broken", store.ErrChainBroken, CodeUnavailable, store.ErrChainBroken.Error(), http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := ErrorCode(tc.err)
			if code != tc.code || msg != tc.msg {
				t.Errorf("ErrorCode = %s %q, want %s %q", code, msg, tc.code, tc.msg)
			}
			if st := HTTPStatus(code); st != tc.httpStatus {
				t.Errorf("HTTPStatus(%s) = %d, want %d", code, st, tc.httpStatus)
			}
		})
	}
	if st := HTTPStatus("no_such_code"); st != http.StatusInternalServerError {
		t.Errorf("unknown code: %d, want 500", st)
	}
}
