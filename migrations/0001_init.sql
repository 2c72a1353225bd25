-- Tavern's first schema. Conventions:
--   * times are TEXT, UTC, RFC 3339 with exactly nine fractional digits
--     ("2026-11-02T09:30:00.000000000Z"), so text order is time order;
--   * columns commented "JSON" hold JSON text (query them with json_extract
--     and json_each);
--   * every row of a table's world, party, log and history carries table_id and
--     disappears with its table (ON DELETE CASCADE).

-- +goose Up
CREATE TABLE players (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    token_hash BLOB NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);

CREATE TABLE tables (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    adventure      TEXT NOT NULL,
    ruleset        TEXT NOT NULL,
    combat_mode    TEXT NOT NULL,
    turn_timeout_s INTEGER NOT NULL DEFAULT 0,
    seats          INTEGER NOT NULL,
    owner_id       TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL
);
CREATE INDEX tables_created ON tables (created_at);

-- A player's place at a table, bound to one character. seats.player_id and
-- tables.owner_id are not foreign keys to players: players belong to the web
-- layer, and a turn's commit must never fail over an identity row. Readers
-- LEFT JOIN players for names.
CREATE TABLE seats (
    table_id     TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    seat         TEXT NOT NULL,
    player_id    TEXT NOT NULL,
    character_id TEXT NOT NULL,
    joined_at    TEXT NOT NULL,
    PRIMARY KEY (table_id, seat),
    UNIQUE (table_id, player_id)
);
CREATE INDEX seats_player ON seats (player_id);

CREATE TABLE characters (
    table_id  TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id        TEXT NOT NULL,
    player_id TEXT NOT NULL,
    seat      TEXT NOT NULL,
    name      TEXT NOT NULL,
    class     TEXT NOT NULL,
    backstory TEXT NOT NULL,
    level     INTEGER NOT NULL,
    xp        INTEGER NOT NULL,
    hp        INTEGER NOT NULL,
    max_hp    INTEGER NOT NULL,
    gold      INTEGER NOT NULL,
    stats     TEXT NOT NULL, -- JSON engine.Stats
    weapon    TEXT NOT NULL,
    armour    TEXT NOT NULL,
    location  TEXT NOT NULL,
    statuses  TEXT NOT NULL, -- JSON array (or null)
    PRIMARY KEY (table_id, id)
);

CREATE TABLE locations (
    table_id    TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    exits       TEXT NOT NULL, -- JSON [{"to","name"}] (or null)
    PRIMARY KEY (table_id, id)
);

CREATE TABLE npcs (
    table_id    TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    kind        TEXT NOT NULL,
    location    TEXT NOT NULL,
    hostile     INTEGER NOT NULL,
    behavior    TEXT NOT NULL,
    disposition INTEGER NOT NULL,
    faction     TEXT NOT NULL,
    personality TEXT NOT NULL,
    tactics     TEXT NOT NULL,
    secret      TEXT NOT NULL,
    lines       TEXT NOT NULL, -- JSON object (or null)
    level       INTEGER NOT NULL,
    hp          INTEGER NOT NULL,
    max_hp      INTEGER NOT NULL,
    stats       TEXT NOT NULL, -- JSON engine.Stats
    weapon      TEXT NOT NULL,
    armour      TEXT NOT NULL,
    gold        INTEGER NOT NULL,
    hidden      INTEGER NOT NULL,
    statuses    TEXT NOT NULL, -- JSON array (or null)
    PRIMARY KEY (table_id, id)
);
CREATE INDEX npcs_location ON npcs (table_id, location);

CREATE TABLE item_templates (
    table_id    TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    category    TEXT NOT NULL,
    description TEXT NOT NULL,
    value       INTEGER NOT NULL,
    PRIMARY KEY (table_id, id)
);

-- Item instances: template is an item_templates id or a catalogue id.
CREATE TABLE items (
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    template   TEXT NOT NULL,
    name       TEXT NOT NULL,
    owner_type TEXT NOT NULL, -- character, npc or location
    owner_id   TEXT NOT NULL,
    buffs      TEXT NOT NULL, -- JSON array (or null)
    flaws      TEXT NOT NULL, -- JSON array (or null)
    PRIMARY KEY (table_id, id)
);
CREATE INDEX items_owner ON items (table_id, owner_type, owner_id);

CREATE TABLE quests (
    table_id    TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id          TEXT NOT NULL,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    giver       TEXT NOT NULL,
    status      TEXT NOT NULL,
    reward_xp   INTEGER NOT NULL,
    reward_gold INTEGER NOT NULL,
    PRIMARY KEY (table_id, id)
);

-- engine.World.Relationships["a|b"] = value, split at the first "|".
CREATE TABLE relationships (
    table_id TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    a        TEXT NOT NULL,
    b        TEXT NOT NULL,
    value    INTEGER NOT NULL,
    PRIMARY KEY (table_id, a, b)
);

CREATE TABLE game_state (
    table_id    TEXT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
    game        TEXT NOT NULL, -- JSON engine.Game
    rng         TEXT NOT NULL, -- JSON engine.RNGState
    world_start TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE events (
    table_id TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    ts       TEXT NOT NULL,
    kind     TEXT NOT NULL,
    turn     TEXT NOT NULL DEFAULT '',
    data     TEXT NOT NULL, -- JSON object (protocol fields of the kind)
    PRIMARY KEY (table_id, seq)
);
CREATE INDEX events_kind ON events (table_id, kind, seq);

-- id orders the messages of every history; turn groups those of one turn.
CREATE TABLE agent_messages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    agent      TEXT NOT NULL, -- narrative or combat
    turn       INTEGER NOT NULL,
    body       TEXT NOT NULL, -- JSON chat message
    created_at TEXT NOT NULL
);
CREATE INDEX agent_messages_history ON agent_messages (table_id, agent, id);

CREATE TABLE pending_actions (
    table_id     TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    id           TEXT NOT NULL,
    player_id    TEXT NOT NULL,
    character_id TEXT NOT NULL,
    seat         TEXT NOT NULL,
    client_id    TEXT NOT NULL,
    text         TEXT NOT NULL,
    status       TEXT NOT NULL, -- pending or resolved
    created_at   TEXT NOT NULL,
    resolved_at  TEXT,
    PRIMARY KEY (table_id, id),
    UNIQUE (table_id, player_id, client_id)
);
CREATE INDEX pending_actions_open ON pending_actions (table_id, created_at) WHERE status = 'pending';

-- +goose Down
DROP TABLE pending_actions;
DROP TABLE agent_messages;
DROP TABLE events;
DROP TABLE game_state;
DROP TABLE relationships;
DROP TABLE quests;
DROP TABLE items;
DROP TABLE item_templates;
DROP TABLE npcs;
DROP TABLE locations;
DROP TABLE characters;
DROP TABLE seats;
DROP TABLE tables;
DROP TABLE players;
