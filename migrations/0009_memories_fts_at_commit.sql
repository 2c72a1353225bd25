-- A new memory is indexed for full-text search by the statement
-- that ends its transaction's writes (internal/db's archive), not by a
-- trigger on its insert. FTS5 keeps the rows inserted in a transaction in
-- memory, but writes them out as a new segment whenever a later statement
-- opens a statement journal (the archive's own UPDATE, the next commit of
-- the group): each archive made a segment of its own, and the merges of
-- those segments were a third of an archive's cost. Inserted last, the
-- group's memories make one segment. Updates and deletes keep their
-- triggers.

-- +goose Up
DROP TRIGGER memories_ai;

-- +goose Down
-- +goose StatementBegin
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, summary, keywords) VALUES (new.id, new.title, new.summary, new.keywords);
END;
-- +goose StatementEnd
