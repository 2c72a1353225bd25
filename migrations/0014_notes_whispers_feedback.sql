-- The table's notes, the owner's whispers to the DM and the players'
-- scores of narrations (PROTOCOL.md "Undo, notes and the owner's word to
-- the DM"). Same conventions as 0001_init.sql.

-- +goose Up
CREATE TABLE notes (
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    text       TEXT NOT NULL,
    author     TEXT NOT NULL, -- player id
    -- The author's name as they wrote it: they may leave the table.
    author_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (table_id, id)
);

-- A whisper waits (used_turn NULL) until the DM turn that reads it.
CREATE TABLE whispers (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    text       TEXT NOT NULL,
    author     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    used_turn  INTEGER
);
CREATE INDEX whispers_waiting ON whispers (table_id, id) WHERE used_turn IS NULL;

-- One score per player per narration (event seq); the last one counts.
-- call_id is the model call that made the narration (llm_calls.id: the
-- last successful call of its agent in its turn), NULL if none is logged.
CREATE TABLE feedback (
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    player_id  TEXT NOT NULL,
    score      INTEGER NOT NULL,
    comment    TEXT NOT NULL,
    turn       TEXT NOT NULL,
    agent      TEXT NOT NULL,
    call_id    INTEGER,
    created_at TEXT NOT NULL,
    PRIMARY KEY (table_id, seq, player_id)
);

ALTER TABLE llm_calls ADD COLUMN prompt_version TEXT NOT NULL DEFAULT '';
CREATE INDEX llm_calls_turn ON llm_calls (table_id, turn, agent);

-- +goose Down
DROP INDEX llm_calls_turn;
ALTER TABLE llm_calls DROP COLUMN prompt_version;
DROP TABLE feedback;
DROP TABLE whispers;
DROP TABLE notes;
