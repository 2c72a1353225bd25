-- The curated read-only views of the operator's data agent: the twins of
-- ../0005_data_views.sql, same names, columns and meaning, in PostgreSQL's
-- SQL (jsonb operators for json_extract, epoch arithmetic for julianday,
-- ILIKE for SQLite's case-blind LIKE).
-- Flags are 0 or 1, as on SQLite.

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
       (c.hp > 0)::integer AS alive,
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
       CASE WHEN e.kind = 'narration' THEN e.data::jsonb ->> 'agent' END AS agent,
       CASE WHEN e.kind = 'dice' THEN e.data::jsonb ->> 'roller' END AS roller,
       CASE WHEN e.kind = 'dice' THEN e.data::jsonb ->> 'purpose' END AS purpose,
       CASE WHEN e.kind = 'dice' THEN e.data::jsonb ->> 'notation' END AS notation,
       CASE WHEN e.kind = 'dice' THEN (e.data::jsonb ->> 'total')::numeric::bigint END AS total,
       CASE WHEN e.kind IN ('damage', 'heal', 'status') THEN e.data::jsonb ->> 'target' END AS target,
       CASE WHEN e.kind IN ('damage', 'heal') THEN (e.data::jsonb ->> 'amount')::numeric::bigint END AS amount,
       CASE WHEN e.kind IN ('combat_started', 'combat_ended') THEN e.data::jsonb ->> 'combat_id' END AS combat_id,
       CASE WHEN e.kind = 'combat_ended' THEN e.data::jsonb ->> 'outcome' END AS outcome,
       CASE WHEN e.kind = 'system' THEN e.data::jsonb ->> 'code' END AS code,
       e.data                    AS data
FROM events e;

CREATE VIEW v_turns AS
SELECT e.table_id                                    AS table_id,
       e.turn                                        AS turn,
       NULLIF(regexp_replace(substr(e.turn, 2), '[^0-9]', '', 'g'), '')::integer AS turn_no,
       max(e.data::jsonb ->> 'agent')                AS agent,
       min(e.seq)                                    AS seq,
       min(e.ts)                                     AS ts,
       substr(min(e.ts), 1, 10)                      AS day,
       max(e.data::jsonb ->> 'action_id')            AS action_id,
       sum(length(e.data::jsonb ->> 'text'))         AS narration_chars
FROM events e
WHERE e.kind = 'narration' AND e.turn NOT IN ('', 't0')
GROUP BY e.table_id, e.turn;

CREATE VIEW v_combats AS
SELECT x.table_id, x.combat_id, t.ruleset, t.combat_mode, t.adventure,
       s.ts AS started_at,
       x.ts AS ended_at,
       substr(x.ts, 1, 10) AS day,
       round(extract(epoch FROM (x.ts::timestamptz - s.ts::timestamptz)))::integer AS duration_s,
       (SELECT max((r.data::jsonb ->> 'round')::numeric::bigint) FROM events r
         WHERE r.table_id = x.table_id AND r.kind = 'turn' AND r.seq > s.seq AND r.seq < x.seq) AS rounds,
       x.outcome,
       (x.outcome = 'player_win')::integer  AS party_won,
       (x.outcome = 'player_flee')::integer AS party_fled,
       (x.outcome = 'player_die')::integer  AS party_died,
       x.xp, x.gold, x.loot_items
FROM (SELECT e.table_id, e.seq, e.ts,
             e.data::jsonb ->> 'combat_id'       AS combat_id,
             e.data::jsonb ->> 'outcome'         AS outcome,
             coalesce((e.data::jsonb #>> '{rewards,xp}')::numeric::bigint, 0)   AS xp,
             coalesce((e.data::jsonb #>> '{rewards,gold}')::numeric::bigint, 0) AS gold,
             coalesce(CASE WHEN jsonb_typeof(e.data::jsonb #> '{rewards,loot}') = 'array'
                           THEN jsonb_array_length(e.data::jsonb #> '{rewards,loot}') END, 0) AS loot_items,
             (SELECT max(b.seq) FROM events b
               WHERE b.table_id = e.table_id AND b.kind = 'combat_started' AND b.seq < e.seq
                 AND b.data::jsonb ->> 'combat_id' = e.data::jsonb ->> 'combat_id') AS start_seq
      FROM events e WHERE e.kind = 'combat_ended') x
JOIN tables t ON t.id = x.table_id
LEFT JOIN events s ON s.table_id = x.table_id AND s.seq = x.start_seq;

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
       c.cost_usd::numeric       AS cost_usd,
       (c.error = '')::integer   AS ok,
       CASE
           WHEN c.error = '' THEN ''
           WHEN c.error ILIKE '%context deadline exceeded%' OR c.error ILIKE '%timeout%' THEN 'timeout'
           WHEN c.error ILIKE '%context canceled%' THEN 'canceled'
           WHEN c.error ILIKE '%429%' OR c.error ILIKE '%rate limit%' THEN 'rate_limited'
           WHEN c.error ILIKE '%401%' OR c.error ILIKE '%403%' THEN 'auth'
           WHEN c.error ILIKE '% 5__ %' OR c.error ILIKE '%: 5__%' THEN 'server'
           WHEN c.error ILIKE '%connection%' OR c.error ILIKE '%dial%' OR c.error ILIKE '%EOF%' THEN 'network'
           ELSE 'other'
       END                       AS error_kind
FROM llm_calls c;

CREATE VIEW v_tool_calls AS
SELECT x.table_id, x.agent, x.turn, x.message_id, x.created_at,
       substr(x.created_at, 1, 10) AS day,
       x.call_id, x.tool, x.arguments,
       CASE
           WHEN x.result IS NULL THEN 'unanswered'
           WHEN x.result ILIKE 'Error:%' THEN 'error'
           WHEN x.result ILIKE 'Unknown tool%' THEN 'unknown_tool'
           WHEN x.result ILIKE 'Ignored:%' THEN 'ignored'
           ELSE 'ok'
       END AS outcome,
       (x.result IS NOT NULL AND (x.result ILIKE 'Error:%' OR x.result ILIKE 'Unknown tool%'))::integer AS failed,
       CASE
           WHEN x.result ILIKE 'Error:%' THEN substr(x.result, 8, 300)
           WHEN x.result ILIKE 'Unknown tool%' THEN substr(x.result, 1, 300)
           ELSE ''
       END AS error
FROM (SELECT m.table_id, m.agent, m.turn, m.id AS message_id, m.created_at,
             c.value ->> 'id'                  AS call_id,
             c.value #>> '{function,name}'      AS tool,
             c.value #>> '{function,arguments}' AS arguments,
             (SELECT r.body::jsonb ->> 'content' FROM agent_messages r
               WHERE r.table_id = m.table_id AND r.agent = m.agent AND r.turn = m.turn
                 AND r.id > m.id AND r.id <= m.id + 200
                 AND r.body::jsonb ->> 'tool_call_id' = c.value ->> 'id'
               ORDER BY r.id LIMIT 1) AS result
      FROM agent_messages m
      CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(m.body::jsonb -> 'tool_calls') = 'array'
                                                   THEN m.body::jsonb -> 'tool_calls' ELSE '[]'::jsonb END) AS c(value)
      WHERE m.body::jsonb ->> 'role' = 'assistant') x;

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
            THEN round(extract(epoch FROM (a.resolved_at::timestamptz - a.created_at::timestamptz)))::integer END AS wait_s
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
