-- The curated read-only views the operator's data agent (seed 003)
-- queries. They are the only objects internal/dataset lets a query name;
-- they leave out every secret (players.token_hash, NPC secrets, the dice
-- RNG state) and anything only the game needs. What each column means is
-- described for the model in internal/dataset/catalogue.go, which must list
-- the same columns in the same order (a test checks).
--
-- Conventions: *_at columns are UTC RFC 3339 text (text order is time
-- order); day columns are 'YYYY-MM-DD' (UTC); flags are 0 or 1. No column
-- is named like a base table (players, tables, seats, events…): the
-- dataset's guard refuses such names.

-- +goose Up

CREATE VIEW v_tables AS
SELECT t.id                      AS table_id,
       t.name                    AS name,
       t.adventure               AS adventure,
       t.ruleset                 AS ruleset,
       t.combat_mode             AS combat_mode,
       t.turn_timeout_s          AS turn_timeout_s,
       t.seats                   AS seat_count,
       (SELECT count(*) FROM seats s WHERE s.table_id = t.id) AS seated,
       (SELECT count(DISTINCT e.turn) FROM events e
         WHERE e.table_id = t.id AND e.kind = 'narration' AND e.turn NOT IN ('', 't0')) AS turns_played,
       (SELECT max(e.ts) FROM events e WHERE e.table_id = t.id) AS last_event_at,
       t.created_at              AS created_at,
       substr(t.created_at, 1, 10) AS created_day
FROM tables t;

CREATE VIEW v_players AS
SELECT p.id                        AS player_id,
       p.name                      AS name,
       p.created_at                AS created_at,
       substr(p.created_at, 1, 10) AS created_day,
       (SELECT count(*) FROM seats s WHERE s.player_id = p.id) AS seated_at
FROM players p;

CREATE VIEW v_seats AS
SELECT s.table_id      AS table_id,
       s.seat          AS seat,
       s.player_id     AS player_id,
       p.name          AS player_name,
       s.character_id  AS character_id,
       c.name          AS character_name,
       s.joined_at     AS joined_at
FROM seats s
LEFT JOIN players p ON p.id = s.player_id
LEFT JOIN characters c ON c.table_id = s.table_id AND c.id = s.character_id;

CREATE VIEW v_characters AS
SELECT c.table_id   AS table_id,
       c.id         AS character_id,
       c.player_id  AS player_id,
       c.seat       AS seat,
       c.name       AS name,
       c.class      AS class,
       c.level      AS level,
       c.xp         AS xp,
       c.hp         AS hp,
       c.max_hp     AS max_hp,
       (c.hp > 0)   AS alive,
       c.gold       AS gold,
       c.weapon     AS weapon,
       c.armour     AS armour,
       c.location   AS location,
       coalesce(c.statuses, 'null') AS statuses
FROM characters c;

CREATE VIEW v_events AS
SELECT e.table_id                AS table_id,
       e.seq                     AS seq,
       e.ts                      AS ts,
       substr(e.ts, 1, 10)       AS day,
       e.kind                    AS kind,
       e.turn                    AS turn,
       CASE WHEN e.kind = 'narration' THEN json_extract(e.data, '$.agent') END AS agent,
       CASE WHEN e.kind = 'dice' THEN json_extract(e.data, '$.roller') END AS roller,
       CASE WHEN e.kind = 'dice' THEN json_extract(e.data, '$.purpose') END AS purpose,
       CASE WHEN e.kind = 'dice' THEN json_extract(e.data, '$.notation') END AS notation,
       CASE WHEN e.kind = 'dice' THEN json_extract(e.data, '$.total') END AS total,
       CASE WHEN e.kind IN ('damage', 'heal', 'status') THEN json_extract(e.data, '$.target') END AS target,
       CASE WHEN e.kind IN ('damage', 'heal') THEN json_extract(e.data, '$.amount') END AS amount,
       CASE WHEN e.kind IN ('combat_started', 'combat_ended') THEN json_extract(e.data, '$.combat_id') END AS combat_id,
       CASE WHEN e.kind = 'combat_ended' THEN json_extract(e.data, '$.outcome') END AS outcome,
       CASE WHEN e.kind = 'system' THEN json_extract(e.data, '$.code') END AS code,
       e.data                    AS data
FROM events e;

-- A played turn is the turns whose DM narration was committed; t0 is the
-- adventure's introduction, not a turn.
CREATE VIEW v_turns AS
SELECT e.table_id                                    AS table_id,
       e.turn                                        AS turn,
       CAST(substr(e.turn, 2) AS INTEGER)            AS turn_no,
       max(json_extract(e.data, '$.agent'))          AS agent,
       min(e.seq)                                    AS seq,
       min(e.ts)                                     AS ts,
       substr(min(e.ts), 1, 10)                      AS day,
       max(json_extract(e.data, '$.action_id'))      AS action_id,
       sum(length(json_extract(e.data, '$.text')))   AS narration_chars
FROM events e
WHERE e.kind = 'narration' AND e.turn NOT IN ('', 't0')
GROUP BY e.table_id, e.turn;

-- One row per ended fight; started_at and rounds come from the fight's
-- combat_started and turn events when the log still has them.
CREATE VIEW v_combats AS
SELECT x.table_id, x.combat_id, t.ruleset, t.combat_mode, t.adventure,
       s.ts AS started_at,
       x.ts AS ended_at,
       substr(x.ts, 1, 10) AS day,
       CAST(round((julianday(x.ts) - julianday(s.ts)) * 86400) AS INTEGER) AS duration_s,
       (SELECT max(json_extract(r.data, '$.round')) FROM events r
         WHERE r.table_id = x.table_id AND r.kind = 'turn' AND r.seq > s.seq AND r.seq < x.seq) AS rounds,
       x.outcome,
       (x.outcome = 'player_win')  AS party_won,
       (x.outcome = 'player_flee') AS party_fled,
       (x.outcome = 'player_die')  AS party_died,
       x.xp, x.gold, x.loot_items
FROM (SELECT e.table_id, e.seq, e.ts,
             json_extract(e.data, '$.combat_id')       AS combat_id,
             json_extract(e.data, '$.outcome')         AS outcome,
             coalesce(json_extract(e.data, '$.rewards.xp'), 0)   AS xp,
             coalesce(json_extract(e.data, '$.rewards.gold'), 0) AS gold,
             coalesce(json_array_length(e.data, '$.rewards.loot'), 0) AS loot_items,
             (SELECT max(b.seq) FROM events b
               WHERE b.table_id = e.table_id AND b.kind = 'combat_started' AND b.seq < e.seq
                 AND json_extract(b.data, '$.combat_id') = json_extract(e.data, '$.combat_id')) AS start_seq
      FROM events e WHERE e.kind = 'combat_ended') x
JOIN tables t ON t.id = x.table_id
LEFT JOIN events s ON s.table_id = x.table_id AND s.seq = x.start_seq;

-- The error text of a failed call is free-form (it can quote the provider's
-- URL and response); only its kind is exposed.
CREATE VIEW v_llm_calls AS
SELECT c.id                      AS call_id,
       c.table_id                AS table_id,
       c.agent                   AS agent,
       c.model                   AS model,
       c.started_at              AS started_at,
       substr(c.started_at, 1, 10) AS day,
       substr(c.started_at, 1, 13) || ':00' AS hour,
       c.latency_ms              AS latency_ms,
       c.prompt_tokens           AS prompt_tokens,
       c.cached_tokens           AS cached_tokens,
       c.completion_tokens       AS completion_tokens,
       c.prompt_tokens + c.completion_tokens AS total_tokens,
       c.cost_usd                AS cost_usd,
       (c.error = '')            AS ok,
       CASE
           WHEN c.error = '' THEN ''
           WHEN c.error LIKE '%context deadline exceeded%' OR c.error LIKE '%timeout%' THEN 'timeout'
           WHEN c.error LIKE '%context canceled%' THEN 'canceled'
           WHEN c.error LIKE '%429%' OR c.error LIKE '%rate limit%' THEN 'rate_limited'
           WHEN c.error LIKE '%401%' OR c.error LIKE '%403%' THEN 'auth'
           WHEN c.error LIKE '% 5__ %' OR c.error LIKE '%: 5__%' THEN 'server'
           WHEN c.error LIKE '%connection%' OR c.error LIKE '%dial%' OR c.error LIKE '%EOF%' THEN 'network'
           ELSE 'other'
       END                       AS error_kind
FROM llm_calls c;

-- Each tool call an agent's model made (assistant messages' tool_calls)
-- with the result the tool gave back: the tool message that answers it,
-- which follows the call within the same turn. Tool results that start
-- with "Error:" or "Unknown tool" are errors (internal/agent's run loop
-- writes them so), "Ignored:" marks calls past the turn's end or limit.
CREATE VIEW v_tool_calls AS
SELECT x.table_id, x.agent, x.turn, x.message_id, x.created_at,
       substr(x.created_at, 1, 10) AS day,
       x.call_id, x.tool, x.arguments,
       CASE
           WHEN x.result IS NULL THEN 'unanswered'
           WHEN x.result LIKE 'Error:%' THEN 'error'
           WHEN x.result LIKE 'Unknown tool%' THEN 'unknown_tool'
           WHEN x.result LIKE 'Ignored:%' THEN 'ignored'
           ELSE 'ok'
       END AS outcome,
       (x.result IS NOT NULL AND (x.result LIKE 'Error:%' OR x.result LIKE 'Unknown tool%')) AS failed,
       CASE
           WHEN x.result LIKE 'Error:%' THEN substr(x.result, 8, 300)
           WHEN x.result LIKE 'Unknown tool%' THEN substr(x.result, 1, 300)
           ELSE ''
       END AS error
FROM (SELECT m.table_id, m.agent, m.turn, m.id AS message_id, m.created_at,
             json_extract(c.value, '$.id')                 AS call_id,
             json_extract(c.value, '$.function.name')      AS tool,
             json_extract(c.value, '$.function.arguments') AS arguments,
             (SELECT json_extract(r.body, '$.content') FROM agent_messages r
               WHERE r.table_id = m.table_id AND r.agent = m.agent AND r.turn = m.turn
                 AND r.id > m.id AND r.id <= m.id + 200
                 AND json_extract(r.body, '$.tool_call_id') = json_extract(c.value, '$.id')
               ORDER BY r.id LIMIT 1) AS result
      FROM agent_messages m, json_each(m.body, '$.tool_calls') c
      WHERE json_extract(m.body, '$.role') = 'assistant') x;

-- Players' acknowledged actions (the durable queue). Retry attempts live in
-- the running server, not in the database.
CREATE VIEW v_pending_actions AS
SELECT a.table_id       AS table_id,
       a.id             AS action_id,
       a.player_id      AS player_id,
       a.character_id   AS character_id,
       a.seat           AS seat,
       CASE WHEN a.kind = '' THEN 'act' ELSE a.kind END AS kind,
       a.status         AS status,
       a.text           AS text,
       a.created_at     AS created_at,
       substr(a.created_at, 1, 10) AS day,
       a.resolved_at    AS resolved_at,
       CASE WHEN a.resolved_at IS NOT NULL
            THEN CAST(round((julianday(a.resolved_at) - julianday(a.created_at)) * 86400) AS INTEGER) END AS wait_s
FROM pending_actions a;

-- +goose Down
DROP VIEW v_pending_actions;
DROP VIEW v_tool_calls;
DROP VIEW v_llm_calls;
DROP VIEW v_combats;
DROP VIEW v_turns;
DROP VIEW v_events;
DROP VIEW v_characters;
DROP VIEW v_seats;
DROP VIEW v_players;
DROP VIEW v_tables;
