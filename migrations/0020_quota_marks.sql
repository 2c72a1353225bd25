-- Creation quotas that every node of a cluster counts alike (DESIGN.md
-- "Beyond one machine": creation quotas are counted in the store). One row
-- per creation (kind: players, tables, adventures) by key (the client's
-- address). Only the PostgreSQL store uses it (internal/pgdb's quotas.go;
-- its twin is migrations/postgres/0020_quota_marks.sql): a SQLite file has
-- one server, whose buckets in memory see every creation, so this stays
-- empty here and exists for the two schemas to match.

-- +goose Up
CREATE TABLE quota_marks (
    id   INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    key  TEXT NOT NULL,
    at   TEXT NOT NULL
);
CREATE INDEX quota_marks_key ON quota_marks (kind, key, at);

-- What each node serves, beside its sockets, for the operator's overview
-- to add up: players' and spectators' sockets, and tables with a socket
-- or a running turn.
ALTER TABLE nodes ADD COLUMN players INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN spectators INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN active INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE nodes DROP COLUMN active;
ALTER TABLE nodes DROP COLUMN spectators;
ALTER TABLE nodes DROP COLUMN players;
DROP TABLE quota_marks;
