-- Undoing a turn (PROTOCOL.md "Undo, notes and the owner's word to the
-- DM"): the state before each of a table's last five turns that resolved
-- a player action, written with the turn. memories_before is the
-- greatest memory id of the table before the turn: a retcon deletes the
-- memories archived since, whose messages then are active again.

-- +goose Up
CREATE TABLE retcon_points (
    table_id        TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    turn            INTEGER NOT NULL,
    action          TEXT NOT NULL, -- JSON engine.PendingAction
    from_seq        INTEGER NOT NULL,
    state           TEXT NOT NULL, -- JSON engine.State before the turn
    memories_before INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    PRIMARY KEY (table_id, turn)
);

-- +goose Down
DROP TABLE retcon_points;
