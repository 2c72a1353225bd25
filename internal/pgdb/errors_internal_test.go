package pgdb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"tavern/internal/engine"
)

// TestWithUnavailable: a transaction the database ended for a reason of
// its own (a paused node's session timed out, a deadlock, a cancel) or
// could not reach is EUNAVAILABLE, to be sent again; a statement's own
// fault (a unique violation) stays internal.
func TestWithUnavailable(t *testing.T) {
	for code, want := range map[string]string{
		"25P03": engine.EUNAVAILABLE, // idle_in_transaction_session_timeout
		"40001": engine.EUNAVAILABLE,
		"40P01": engine.EUNAVAILABLE,
		"57014": engine.EUNAVAILABLE,
		"57P01": engine.EUNAVAILABLE, // the server shuts down
		"08006": engine.EUNAVAILABLE,
		"23505": engine.EINTERNAL,
	} {
		err := withUnavailable(fmt.Errorf("commit: %w", &pgconn.PgError{Code: code}))
		if got := engine.ErrorCode(err); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
	if got := engine.ErrorCode(withUnavailable(errors.New("decode state: bad json"))); got != engine.EINTERNAL {
		t.Errorf("a plain error: %s, want internal", got)
	}
}
