-- Adventures players write and share (PROTOCOL.md "Adventures"). The
-- built-in ones live in the binary; these are the community's. source is
-- the YAML as uploaded (at most 256 KiB), replaced in place by its author;
-- hidden ones stay for the tables made from them. table_adventures keeps
-- the copy each table was made from, so a replaced adventure never changes
-- a table already playing it.

-- +goose Up
CREATE TABLE adventures (
    id          TEXT PRIMARY KEY,
    author_id   TEXT NOT NULL REFERENCES players (id),
    title       TEXT NOT NULL,
    summary     TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL,
    forked_from TEXT NOT NULL DEFAULT '',
    hidden      INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX adventures_listed ON adventures (hidden, created_at);

CREATE TABLE table_adventures (
    table_id     TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    adventure_id TEXT NOT NULL,
    source       TEXT NOT NULL
);

-- A table's shops and planned encounters: fixed once the table is made,
-- so written then and read back with the rest of its state.
CREATE TABLE world_trade (
    table_id   TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    shops      TEXT NOT NULL DEFAULT '{}',
    encounters TEXT NOT NULL DEFAULT '{}'
);

-- +goose Down
DROP TABLE world_trade;
DROP TABLE table_adventures;
DROP INDEX adventures_listed;
DROP TABLE adventures;
