-- Fewer index pages per commit. Every index row a turn inserts
-- dirties a page of that index (each table's rows sit in a range of their
-- own), which the WAL and then the checkpoint write out; these indexes
-- cost about a third of a turn's WAL pages and were read by little.
--
-- agent_messages: the active history (memory_id NULL) gets a partial
-- index, which an archive leaves by deleting the entry rather than moving
-- it, and which stays a few turns long per history. The whole-history
-- index goes: the export reads the archived messages through their
-- memories (agent_messages_memory) and the active ones through the partial
-- index (AllHistory). No table is deleted by the server, so the ON DELETE
-- CASCADE from tables needs no index of its own.
--
-- events: only the kinds a reader looks up per table keep an index (the
-- last narration, a fight's turns and start: TableProgress, v_turns,
-- v_combats), as partial indexes, instead of every event.

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
