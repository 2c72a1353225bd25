-- Undoing a turn: the twin of ../0015_retcon.sql. memories_before is the
-- greatest memory id of the table before the turn.

-- +goose Up
CREATE TABLE retcon_points (
    table_id        TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    turn            INTEGER NOT NULL,
    action          TEXT NOT NULL,
    from_seq        BIGINT NOT NULL,
    state           TEXT NOT NULL,
    memories_before BIGINT NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (table_id, turn)
);

-- +goose Down
DROP TABLE retcon_points;
