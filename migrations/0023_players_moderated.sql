-- The players the operator shut out (banned or erased), which every node
-- of a cluster reads every few seconds to close their sockets there too.
-- Only the PostgreSQL store reads it (internal/pgdb's moderation.go; its
-- twin is migrations/postgres/0023_players_moderated.sql); it exists here
-- for the two schemas to match.

-- +goose Up
CREATE INDEX players_moderated ON players (id) WHERE banned_at IS NOT NULL OR erased_at IS NOT NULL;

-- +goose Down
DROP INDEX players_moderated;
