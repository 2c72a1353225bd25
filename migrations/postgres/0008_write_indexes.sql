-- The twin of ../0008_write_indexes.sql.

-- +goose Up
DROP INDEX agent_messages_history;
DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id) WHERE memory_id IS NULL;

DROP INDEX events_kind;
CREATE INDEX events_narration ON events (table_id, seq) WHERE kind = 'narration';
CREATE INDEX events_turn ON events (table_id, seq) WHERE kind = 'turn';
CREATE INDEX events_combat_started ON events (table_id, seq) WHERE kind = 'combat_started';

-- +goose Down
DROP INDEX events_combat_started;
DROP INDEX events_turn;
DROP INDEX events_narration;
CREATE INDEX events_kind ON events (table_id, kind, seq);

DROP INDEX agent_messages_active;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, memory_id, id);
CREATE INDEX agent_messages_history ON agent_messages (table_id, agent, id);
