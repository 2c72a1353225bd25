-- The twin of ../0023_players_moderated.sql: the players the operator
-- shut out (banned or erased), which every node reads every few seconds
-- to close their sockets there too.

-- +goose Up
CREATE INDEX players_moderated ON players (id) WHERE banned_at IS NOT NULL OR erased_at IS NOT NULL;

-- +goose Down
DROP INDEX players_moderated;
