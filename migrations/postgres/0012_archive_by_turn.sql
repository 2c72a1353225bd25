-- The twin of ../0012_archive_by_turn.sql.

-- +goose Up
DROP INDEX agent_messages_active;
DROP INDEX agent_messages_memory;
ALTER TABLE agent_messages DROP COLUMN memory_id;
CREATE INDEX agent_messages_turn ON agent_messages (table_id, agent, turn);
CREATE INDEX memories_last_turn ON memories (table_id, agent, last_turn);

-- +goose Down
ALTER TABLE agent_messages ADD COLUMN memory_id BIGINT;
UPDATE agent_messages SET memory_id = (
    SELECT m.id FROM memories m
    WHERE m.table_id = agent_messages.table_id AND m.agent = agent_messages.agent AND m.last_turn >= agent_messages.turn
    ORDER BY m.last_turn, m.id LIMIT 1);
DROP INDEX memories_last_turn;
DROP INDEX agent_messages_turn;
CREATE INDEX agent_messages_memory ON agent_messages (memory_id, turn) WHERE memory_id IS NOT NULL;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id, turn, memory_id) WHERE memory_id IS NULL;
