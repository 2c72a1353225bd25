-- Long-term memory and the LLM call log. Same conventions as
-- 0001_init.sql (UTC RFC 3339 text times, JSON text columns).

-- +goose Up

-- An archived, summarised block of one agent's history (seed 001). Its
-- messages stay in agent_messages with memory_id set; the ones with
-- memory_id NULL are the active history the window is built from.
CREATE TABLE memories (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id   TEXT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    agent      TEXT NOT NULL, -- narrative or combat
    first_turn INTEGER NOT NULL,
    last_turn  INTEGER NOT NULL,
    messages   INTEGER NOT NULL,
    title      TEXT NOT NULL,
    summary    TEXT NOT NULL,
    keywords   TEXT NOT NULL, -- JSON array of strings
    source     TEXT NOT NULL, -- the summary model, or "extractive"
    created_at TEXT NOT NULL
);
CREATE INDEX memories_table ON memories (table_id, agent, id);

ALTER TABLE agent_messages ADD COLUMN memory_id INTEGER;
CREATE INDEX agent_messages_active ON agent_messages (table_id, agent, memory_id, id);

-- Full-text index of the memories (external content: the text lives in
-- memories; triggers keep the index in step).
CREATE VIRTUAL TABLE memories_fts USING fts5 (
    title, summary, keywords,
    content = 'memories', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- +goose StatementBegin
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, title, summary, keywords) VALUES (new.id, new.title, new.summary, new.keywords);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, summary, keywords) VALUES ('delete', old.id, old.title, old.summary, old.keywords);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts (memories_fts, rowid, title, summary, keywords) VALUES ('delete', old.id, old.title, old.summary, old.keywords);
    INSERT INTO memories_fts (rowid, title, summary, keywords) VALUES (new.id, new.title, new.summary, new.keywords);
END;
-- +goose StatementEnd

-- One model call (DESIGN.md "Persistence"): for the admin side's latency,
-- token, cost and error views. table_id is not a foreign key: the log
-- outlives tables and also holds calls made for no table.
CREATE TABLE llm_calls (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id          TEXT NOT NULL,
    agent             TEXT NOT NULL, -- narrative, combat or summary
    model             TEXT NOT NULL,
    started_at        TEXT NOT NULL,
    latency_ms        INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_tokens     INTEGER NOT NULL,
    cost_usd          REAL NOT NULL,
    error             TEXT NOT NULL
);
CREATE INDEX llm_calls_table ON llm_calls (table_id, id);
CREATE INDEX llm_calls_started ON llm_calls (started_at);

-- +goose Down
DROP TABLE llm_calls;
DROP TRIGGER memories_au;
DROP TRIGGER memories_ad;
DROP TRIGGER memories_ai;
DROP TABLE memories_fts;
DROP INDEX agent_messages_active;
ALTER TABLE agent_messages DROP COLUMN memory_id;
DROP TABLE memories;
