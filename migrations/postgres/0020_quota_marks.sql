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

-- +goose Down
DROP TABLE quota_marks;
