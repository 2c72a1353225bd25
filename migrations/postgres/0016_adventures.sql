-- The twin of ../0016_adventures.sql: the adventures players write, the
-- copy each table keeps of its own, and a table's shops and encounters
-- (JSON text, as the other state rows).

-- +goose Up
CREATE TABLE adventures (
    id          TEXT PRIMARY KEY,
    author_id   TEXT NOT NULL REFERENCES players (id),
    title       TEXT NOT NULL,
    summary     TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL,
    forked_from TEXT NOT NULL DEFAULT '',
    hidden      BOOLEAN NOT NULL DEFAULT false,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX adventures_listed ON adventures (hidden, created_at);

CREATE TABLE table_adventures (
    table_id     TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    adventure_id TEXT NOT NULL,
    source       TEXT NOT NULL
);

CREATE TABLE world_trade (
    table_id   TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    shops      TEXT NOT NULL DEFAULT '{}',
    encounters TEXT NOT NULL DEFAULT '{}'
);

-- +goose Down
DROP TABLE world_trade;
DROP TABLE table_adventures;
DROP TABLE adventures;
