-- The twin of ../0010_active_history_turns.sql.

-- +goose Up
DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id, turn, memory_id) WHERE memory_id IS NULL;

-- +goose Down
DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id) WHERE memory_id IS NULL;
