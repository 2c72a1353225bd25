-- The table owner's controls (PROTOCOL.md "Table owners"): a private
-- table is hidden from strangers; npc_hp says how players see NPC health
-- ('exact' numbers or 'words'); invite_hash is the SHA-256 of the
-- table's current invite code (the code itself is never stored, as
-- player tokens); a ban keeps a player from sitting, watching or using
-- an invite at one table.

-- +goose Up
ALTER TABLE tables ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tables ADD COLUMN npc_hp TEXT NOT NULL DEFAULT 'exact';
ALTER TABLE tables ADD COLUMN invite_hash BLOB;
CREATE INDEX tables_owner ON tables (owner_id);
CREATE INDEX tables_invite ON tables (invite_hash) WHERE invite_hash IS NOT NULL;

CREATE TABLE table_bans (
    table_id  TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    player_id TEXT NOT NULL,
    banned_at TEXT NOT NULL,
    PRIMARY KEY (table_id, player_id)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE table_bans;
DROP INDEX tables_invite;
DROP INDEX tables_owner;
ALTER TABLE tables DROP COLUMN invite_hash;
ALTER TABLE tables DROP COLUMN npc_hp;
ALTER TABLE tables DROP COLUMN private;
