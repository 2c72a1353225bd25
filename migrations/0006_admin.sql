-- The operator's console. A pending action's lifecycle as stored
-- data (pending → running → failed(n) → resolved | abandoned): the
-- existing status column still says only whether the action is open
-- ('pending') or closed ('resolved'), so the partial index and every
-- reader of open actions keep working; state says where in its life it is.
-- Tables can be paused and closed by the operator. The call log remembers
-- the turn that made each call and what kind of error it ended with.

-- +goose Up
ALTER TABLE pending_actions ADD COLUMN state TEXT NOT NULL DEFAULT 'pending'; -- pending, running, failed, resolved, abandoned
ALTER TABLE pending_actions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_actions ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
UPDATE pending_actions SET state = 'resolved' WHERE status = 'resolved';

ALTER TABLE tables ADD COLUMN paused INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tables ADD COLUMN closed_at TEXT; -- NULL while open

ALTER TABLE llm_calls ADD COLUMN turn TEXT NOT NULL DEFAULT '';       -- the table turn ("t12"), '' outside a turn
ALTER TABLE llm_calls ADD COLUMN error_kind TEXT NOT NULL DEFAULT ''; -- timeout, rate_limit, server, invalid_output, other

-- +goose Down
ALTER TABLE llm_calls DROP COLUMN error_kind;
ALTER TABLE llm_calls DROP COLUMN turn;
ALTER TABLE tables DROP COLUMN closed_at;
ALTER TABLE tables DROP COLUMN paused;
ALTER TABLE pending_actions DROP COLUMN last_error;
ALTER TABLE pending_actions DROP COLUMN attempts;
ALTER TABLE pending_actions DROP COLUMN state;
