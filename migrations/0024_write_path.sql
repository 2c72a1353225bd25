-- Nothing to do on SQLite: its twin, postgres/0024_write_path.sql, has
-- PostgreSQL compress the large values of the write path with lz4 and
-- adds the function its statements call to refuse a commit. This file
-- exists for the version numbers of the two folders to match.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
