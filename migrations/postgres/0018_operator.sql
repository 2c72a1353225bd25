-- The twin of ../0018_operator.sql: the tables' own daily model budgets,
-- the console's named users (a token's SHA-256 each; revoking keeps the
-- row), and the server-wide ban and erasure marks of players.

-- +goose Up
CREATE TABLE table_budgets (
    table_id    TEXT PRIMARY KEY,
    usd_per_day DOUBLE PRECISION NOT NULL, -- 0: no budget of its own
    set_by      TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE console_users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    role       TEXT NOT NULL, -- viewer or moderator
    token_hash BYTEA NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT           -- NULL while the token works
);

ALTER TABLE players ADD COLUMN banned_at TEXT;   -- NULL unless banned server-wide
ALTER TABLE players ADD COLUMN ban_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE players ADD COLUMN erased_at TEXT;   -- NULL unless erased

-- +goose Down
ALTER TABLE players DROP COLUMN erased_at;
ALTER TABLE players DROP COLUMN ban_reason;
ALTER TABLE players DROP COLUMN banned_at;
DROP TABLE console_users;
DROP TABLE table_budgets;
