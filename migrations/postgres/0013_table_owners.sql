-- The table owner's controls: the twin of ../0013_table_owners.sql.
-- invite_hash is the SHA-256 of the table's current invite code (the code
-- itself is never stored).

-- +goose Up
ALTER TABLE tables ADD COLUMN private BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE tables ADD COLUMN npc_hp TEXT NOT NULL DEFAULT 'exact';
ALTER TABLE tables ADD COLUMN invite_hash BYTEA;
CREATE INDEX tables_owner ON tables (owner_id);
CREATE INDEX tables_invite ON tables (invite_hash) WHERE invite_hash IS NOT NULL;

CREATE TABLE table_bans (
    table_id  TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    player_id TEXT NOT NULL,
    banned_at TEXT NOT NULL,
    PRIMARY KEY (table_id, player_id)
);

-- +goose Down
DROP TABLE table_bans;
DROP INDEX tables_invite;
DROP INDEX tables_owner;
ALTER TABLE tables DROP COLUMN invite_hash;
ALTER TABLE tables DROP COLUMN npc_hp;
ALTER TABLE tables DROP COLUMN private;
