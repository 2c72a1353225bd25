-- +goose Up
-- Archiving looks up a memory's messages by memory_id (the first turn of
-- the block, and recall of a session); without this index each archive
-- scanned every table's history inside the write transaction.
CREATE INDEX agent_messages_memory ON agent_messages (memory_id, turn) WHERE memory_id IS NOT NULL;

-- +goose Down
DROP INDEX agent_messages_memory;
