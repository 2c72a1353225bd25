-- Two indexes no query reads, each an index page a turn
-- dirtied per table (a few per cent of a saturated play run's WAL pages)
-- and an index entry per row to write.
--
-- llm_calls_table (table_id, id): the call log is read newest first over
-- every table (Calls: its "? = '' OR table_id = ?" scans by id), by time
-- (CallsSince: llm_calls_started) and by the data agent's v_llm_calls; no
-- plan used it. npcs_location (table_id, location): a table's NPCs are
-- read whole, by the primary key, when the table loads; every NPC written
-- rewrote its entry.

-- +goose Up
DROP INDEX llm_calls_table;
DROP INDEX npcs_location;

-- +goose Down
CREATE INDEX npcs_location ON npcs (table_id, location);
CREATE INDEX llm_calls_table ON llm_calls (table_id, id);
