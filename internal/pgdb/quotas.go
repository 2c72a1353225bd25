package pgdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Creation quotas counted in the store (DESIGN.md "Beyond one machine"),
// so that a client that spreads its requests over the nodes gets no more
// than from one: a key (a client's address) may make at most limit of a
// kind within any window. Times are the database's clock.

// TakeQuota records one creation of kind by key, unless key made limit of
// them within window: then it returns id 0 and how long until the oldest
// of them leaves the window. An id names the mark for ReturnQuota. Calls
// for one (kind, key) are serialised across the nodes (an advisory lock
// for the transaction), so the count is exact. Safe for concurrent use.
func (d *DB) TakeQuota(ctx context.Context, kind, key string, limit int, window time.Duration) (id int64, wait time.Duration, err error) {
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		span := window.Microseconds()
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1 || ' ' || $2, 0))", kind, key); err != nil {
			return err
		}
		// The time is the clock's once the lock is held, not the
		// transaction's start (now()): the lock may have kept this one
		// waiting behind a creation marked after it started, whose wait
		// would then read longer than the window.
		var at time.Time
		if err := tx.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&at); err != nil {
			return err
		}
		// Marks past the window count no more.
		if _, err := tx.Exec(ctx, "DELETE FROM quota_marks WHERE kind = $1 AND key = $2 AND at <= $3::timestamptz - $4 * interval '1 microsecond'", kind, key, at, span); err != nil {
			return err
		}
		var n int
		var left float64
		err := tx.QueryRow(ctx, `SELECT count(*), coalesce(extract(epoch FROM min(at) + $4 * interval '1 microsecond' - $3::timestamptz), 0)::float8
			FROM quota_marks WHERE kind = $1 AND key = $2`, kind, key, at, span).Scan(&n, &left)
		if err != nil {
			return err
		}
		if n >= limit {
			wait = time.Duration(left * float64(time.Second))
			return nil
		}
		return tx.QueryRow(ctx, "INSERT INTO quota_marks (kind, key) VALUES ($1, $2) RETURNING id", kind, key).Scan(&id)
	})
	if err != nil {
		return 0, 0, withUnavailable(fmt.Errorf("take quota %s for %s: %w", kind, key, err))
	}
	return id, wait, nil
}

// ReturnQuota gives back the creation TakeQuota recorded as id (a request
// then refused as invalid costs no quota).
func (d *DB) ReturnQuota(ctx context.Context, id int64) error {
	if _, err := d.pool.Exec(ctx, "DELETE FROM quota_marks WHERE id = $1", id); err != nil {
		return withUnavailable(fmt.Errorf("return quota mark %d: %w", id, err))
	}
	return nil
}
