-- The twin of ../0019_nodes_owners.sql: the cluster's directory. Times are
-- the database's clock (timestamptz, now()), never a node's: a node's
-- lease is alive while expires_at > now().

-- +goose Up
CREATE TABLE nodes (
    id         TEXT PRIMARY KEY,
    addr       TEXT NOT NULL,
    state      TEXT NOT NULL DEFAULT 'alive',
    tables     INTEGER NOT NULL DEFAULT 0,
    sockets    INTEGER NOT NULL DEFAULT 0,
    started_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);

CREATE TABLE table_owners (
    table_id   TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    node_id    TEXT,
    epoch      BIGINT NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX table_owners_node ON table_owners (node_id);

-- +goose Down
DROP TABLE table_owners;
DROP TABLE nodes;
