-- The twin of ../0020_quota_marks.sql: one row per creation (kind: players,
-- tables, adventures) by key (the client's address), so that every node
-- counts the cluster's creations. Times are the database's clock.

-- +goose Up
CREATE TABLE quota_marks (
    id   BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    key  TEXT NOT NULL,
    at   timestamptz NOT NULL DEFAULT now()
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
