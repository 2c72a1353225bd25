-- The twin of ../0011_unread_indexes.sql.

-- +goose Up
DROP INDEX llm_calls_table;
DROP INDEX npcs_location;

-- +goose Down
CREATE INDEX npcs_location ON npcs (table_id, location);
CREATE INDEX llm_calls_table ON llm_calls (table_id, id);
