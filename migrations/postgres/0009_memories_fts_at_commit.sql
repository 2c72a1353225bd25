-- The twin of ../0009_memories_fts_at_commit.sql, which changes only how
-- SQLite's FTS5 index is kept: the generated column (0002) needs nothing.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
