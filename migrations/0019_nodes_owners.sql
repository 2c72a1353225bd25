-- Several nodes on one database (DESIGN.md "Beyond one machine"): one row
-- per server process in nodes, one owner row per table in table_owners.
-- Only the PostgreSQL store uses them (internal/pgdb's owners.go; its
-- twin is migrations/postgres/0019_nodes_owners.sql): a SQLite file has
-- one server (the lock file beside it), so these stay empty here and
-- exist for the two schemas to match.

-- +goose Up
-- A server process. expires_at is renewed every few seconds by the node;
-- past it the node is dead and its tables may be claimed. state is alive
-- or draining; tables and sockets are what it serves, for the overview.
CREATE TABLE nodes (
    id         TEXT PRIMARY KEY,
    addr       TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'alive',
    tables     INTEGER NOT NULL DEFAULT 0,
    sockets    INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

-- Who runs a table. epoch rises on every claim; a commit whose node and
-- epoch no longer match is fenced. node_id is NULL once released.
CREATE TABLE table_owners (
    table_id   TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    node_id    TEXT,
    epoch      INTEGER NOT NULL,
    claimed_at TEXT NOT NULL
);
CREATE INDEX table_owners_node ON table_owners (node_id);

-- +goose Down
DROP TABLE table_owners;
DROP TABLE nodes;
