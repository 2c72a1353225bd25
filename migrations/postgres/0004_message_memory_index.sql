-- The twin of ../0004_message_memory_index.sql.

-- +goose Up
CREATE INDEX agent_messages_memory ON agent_messages (memory_id, turn) WHERE memory_id IS NOT NULL;

-- +goose Down
DROP INDEX agent_messages_memory;
