-- The operator's conversations with the data agent (seed 003),
-- so a follow-up question sees the earlier ones, also after a restart.
-- One row per message in the Chat Completions format (as agent_messages);
-- turn numbers the questions of a conversation from 1. Not a curated view:
-- the data agent cannot read it.

-- +goose Up
CREATE TABLE ask_messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation TEXT NOT NULL,
    turn         INTEGER NOT NULL,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX ask_messages_conversation ON ask_messages (conversation, id);

-- +goose Down
DROP TABLE ask_messages;
