-- The index of the active histories (0008) also holds each
-- message's turn, so that the query an archive starts with (how many
-- active messages up to its last turn, and the first of their turns:
-- internal/db's qArchiveRange) reads the index alone instead of the row of
-- every active message; in a saturated play run that query was a fifth of
-- an archive's cost on the group-commit writer. memory_id, NULL in every
-- entry, is there because SQLite counts the index's WHERE column as one
-- the query needs. The index stays ordered by id for the history reads.

-- +goose Up
DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id, turn, memory_id) WHERE memory_id IS NULL;

-- +goose Down
DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id) WHERE memory_id IS NULL;
