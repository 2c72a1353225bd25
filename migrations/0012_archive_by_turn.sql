-- An archive no longer rewrites the messages it archives. A
-- memory records the turns it covers, and archives are a prefix of the
-- history by turn (every active message with a turn up to the memory's
-- last_turn), so a message's memory follows from its turn: the memory of
-- its table and agent with the smallest last_turn at or above it. The
-- active history is what lies after the agent's greatest last_turn. (A
-- message stored after an archive with a turn the archive covers would
-- now be archived with it; the server never does this, its turns only
-- grow.)
-- Setting memory_id rewrote each archived row (a user message is most of
-- a page) and both partial indexes: the archive was a sixth of the
-- group-commit writer's time in a saturated play run.
--
-- agent_messages_turn orders a history by turn (then id): the active
-- history and an archive's range are the end of it, a memory's messages a
-- slice of it. memories_last_turn finds an agent's last archived turn, and
-- the memory before a given one, without reading the memories.

-- +goose Up
DROP INDEX agent_messages_active;
DROP INDEX agent_messages_memory;
ALTER TABLE agent_messages DROP COLUMN memory_id;
CREATE INDEX agent_messages_turn ON agent_messages (table_id, agent, turn);
CREATE INDEX memories_last_turn ON memories (table_id, agent, last_turn);

-- +goose Down
ALTER TABLE agent_messages ADD COLUMN memory_id INTEGER;
UPDATE agent_messages SET memory_id = (
    SELECT m.id FROM memories m
    WHERE m.table_id = agent_messages.table_id AND m.agent = agent_messages.agent AND m.last_turn >= agent_messages.turn
    ORDER BY m.last_turn, m.id LIMIT 1);
DROP INDEX memories_last_turn;
DROP INDEX agent_messages_turn;
CREATE INDEX agent_messages_memory ON agent_messages (memory_id, turn) WHERE memory_id IS NOT NULL;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, id, turn, memory_id) WHERE memory_id IS NULL;
