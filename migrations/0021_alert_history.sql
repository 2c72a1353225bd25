-- The operator's alert history (PROTOCOL.md "Operator, continued"): each
-- alert raised, with what it measured against its threshold, and when it
-- cleared (NULL while it fires), so the overview keeps it across a
-- restart. One open row per alert id at most (the unique index: nodes
-- that raise the same alert write it once). The store keeps the last
-- 1000 rows and none older than 30 days.

-- +goose Up
CREATE TABLE alert_history (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    alert_id   TEXT NOT NULL, -- rule, then ":" and what it is about
    rule       TEXT NOT NULL,
    severity   TEXT NOT NULL,
    summary    TEXT NOT NULL,
    value      REAL NOT NULL,
    threshold  REAL NOT NULL,
    table_id   TEXT NOT NULL DEFAULT '',
    raised_at  TEXT NOT NULL,
    cleared_at TEXT
);
CREATE UNIQUE INDEX alert_history_open ON alert_history (alert_id) WHERE cleared_at IS NULL;
CREATE INDEX alert_history_raised ON alert_history (raised_at);

-- +goose Down
DROP TABLE alert_history;
