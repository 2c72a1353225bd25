-- The twin of ../0003_world_rules.sql.

-- +goose Up
ALTER TABLE quests ADD COLUMN requires TEXT NOT NULL DEFAULT '';
ALTER TABLE pending_actions ADD COLUMN kind TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_actions DROP COLUMN kind;
ALTER TABLE quests DROP COLUMN requires;
