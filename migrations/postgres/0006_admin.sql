-- The twin of ../0006_admin.sql.

-- +goose Up
ALTER TABLE pending_actions ADD COLUMN state TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE pending_actions ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pending_actions ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
UPDATE pending_actions SET state = 'resolved' WHERE status = 'resolved';

ALTER TABLE tables ADD COLUMN paused BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE tables ADD COLUMN closed_at TEXT;

ALTER TABLE llm_calls ADD COLUMN turn TEXT NOT NULL DEFAULT '';
ALTER TABLE llm_calls ADD COLUMN error_kind TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE llm_calls DROP COLUMN error_kind;
ALTER TABLE llm_calls DROP COLUMN turn;
ALTER TABLE tables DROP COLUMN closed_at;
ALTER TABLE tables DROP COLUMN paused;
ALTER TABLE pending_actions DROP COLUMN last_error;
ALTER TABLE pending_actions DROP COLUMN attempts;
ALTER TABLE pending_actions DROP COLUMN state;
