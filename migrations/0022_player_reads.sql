-- The reads that start from a player or an adventure: the operator's
-- player page and erasure (a player's actions and scores), and the number
-- of tables made from an adventure. Without these each scans its whole
-- table. The twin is migrations/postgres/0022_player_reads.sql.

-- +goose Up
CREATE INDEX pending_actions_player ON pending_actions (player_id, created_at);
CREATE INDEX feedback_player ON feedback (player_id);
CREATE INDEX tables_adventure ON tables (adventure);

-- +goose Down
DROP INDEX tables_adventure;
DROP INDEX feedback_player;
DROP INDEX pending_actions_player;
