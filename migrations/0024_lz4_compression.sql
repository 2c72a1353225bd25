-- Nothing to do on SQLite, which does not compress values: its twin,
-- postgres/0024_lz4_compression.sql, has PostgreSQL compress the large
-- values of the write path with lz4. It exists for the version numbers
-- of the two folders to match.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
