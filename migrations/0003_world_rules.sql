-- +goose Up
-- World rules: a quest may require an item (a template id) to be in its giver's hands
-- before the engine lets it complete.
ALTER TABLE quests ADD COLUMN requires TEXT NOT NULL DEFAULT '';
-- A pending action is a player's act ('') or a session start ('start').
ALTER TABLE pending_actions ADD COLUMN kind TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE pending_actions DROP COLUMN kind;
ALTER TABLE quests DROP COLUMN requires;
