// Package datasettest builds a small Tavern database with known contents
// for tests of the data agent: tables, seats, fights, model calls, tool
// calls and actions, inserted with SQL at fixed times. Start with
// [MustSeed]; the facts tests may rely on are listed on [Now].
package datasettest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tavern/internal/db"
)

// Now is the "current time" the seed is built around: Sunday 2026-11-08
// 12:00 UTC. The ISO week started Monday 2026-11-02.
//
// Known facts of the seeded database:
//   - 4 players (Alice, Bob, Cara, Dan), 3 tables: "Greyhollow A" (d20,
//     created 2026-10-30), "Greyhollow B" (d100, 2026-11-02) and
//     "Night Crypt" (crypt, d20, 2026-11-05); 5 seats.
//   - 13 played turns: Greyhollow A 6 (2 of them before 2026-11-02),
//     Greyhollow B 3, Night Crypt 4; so 11 this week.
//   - 6 fights: d20 5 (2 won, 2 died, 1 fled), d100 1 (won).
//   - 10 model calls over 2026-11-03..2026-11-07, gpt-4o-mini and gpt-4o,
//     2 failed (a timeout and a 429); gpt-4o cost 0.30, gpt-4o-mini 0.06.
//   - 11 tool calls: attack 4 (2 errors), move 2 (1 error), narrate 4,
//     fireball 1 (unknown tool).
var Now = time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC)

// Secrets holds values the seed stores where no query may read them (token
// hashes, an NPC's secret, the RNG state); tests assert they never appear
// in a result.
var Secrets = []string{"tok-hash-alice-7f3a", "tok-hash-bob-91c2", "tok-hash-cara-5d10", "tok-hash-dan-c0de",
	"the-miller-poisoned-the-well", "rng-state-42-do-not-leak"}

// MustSeed creates a migrated database file in a temporary directory,
// fills it with the seed and returns its path. The file is closed: open
// it with dataset.Open (and db.Open, which also works).
func MustSeed(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "tavern.db")
	ctx := context.Background()
	d, err := db.Open(ctx, path)
	if err != nil {
		tb.Fatalf("migrate %s: %v", path, err)
	}
	if err := d.Close(); err != nil {
		tb.Fatalf("close: %v", err)
	}
	w, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	defer w.Close()
	s := &seeder{tb: tb, db: w, seq: map[string]int{}}
	s.seed()
	return path
}

type seeder struct {
	tb  testing.TB
	db  *sql.DB
	seq map[string]int
}

func (s *seeder) exec(q string, args ...any) {
	s.tb.Helper()
	if _, err := s.db.Exec(q, args...); err != nil {
		s.tb.Fatalf("seed %q: %v", q, err)
	}
}

// at is a time on day (November 2026) at hour:minute UTC, in the store's
// nine-digit format.
func at(day, hour, minute int) string {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000000Z07:00")
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (s *seeder) event(table, ts, kind, turn string, data map[string]any) {
	s.seq[table]++
	s.exec(`INSERT INTO events (table_id, seq, ts, kind, turn, data) VALUES (?, ?, ?, ?, ?, ?)`,
		table, s.seq[table], ts, kind, turn, js(data))
}

type tableSeed struct {
	id, name, adventure, ruleset, mode, created string
}

func (s *seeder) seed() {
	players := []struct{ id, name, hash, created string }{
		{"p1", "Alice", Secrets[0], at(1, 9, 0)},
		{"p2", "Bob", Secrets[1], at(1, 10, 0)},
		{"p3", "Cara", Secrets[2], at(2, 8, 0)},
		{"p4", "Dan", Secrets[3], at(5, 18, 0)},
	}
	for _, p := range players {
		s.exec(`INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)`, p.id, p.name, []byte(p.hash), p.created)
	}
	tables := []tableSeed{
		{"t1", "Greyhollow A", "greyhollow", "d20", "tactical", time.Date(2026, 10, 30, 20, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000000Z07:00")},
		{"t2", "Greyhollow B", "greyhollow", "d100", "tactical", at(2, 9, 0)},
		{"t3", "Night Crypt", "crypt", "d20", "narrative", at(5, 19, 0)},
	}
	for _, t := range tables {
		s.exec(`INSERT INTO tables (id, name, adventure, ruleset, combat_mode, seats, owner_id, created_at) VALUES (?, ?, ?, ?, ?, 4, 'p1', ?)`,
			t.id, t.name, t.adventure, t.ruleset, t.mode, t.created)
		s.event(t.id, t.created, "narration", "t0", map[string]any{"agent": "narrative", "text": "Welcome to " + t.name + "."})
	}
	seats := []struct{ table, seat, player, char, name, class string }{
		{"t1", "s1", "p1", "c1", "Brenna", "fighter"},
		{"t1", "s2", "p2", "c2", "Tobin", "rogue"},
		{"t2", "s1", "p3", "c1", "Ilse", "mage"},
		{"t3", "s1", "p1", "c1", "Brenna II", "cleric"},
		{"t3", "s2", "p4", "c2", "Orrin", "fighter"},
	}
	for _, x := range seats {
		s.exec(`INSERT INTO seats (table_id, seat, player_id, character_id, joined_at) VALUES (?, ?, ?, ?, ?)`, x.table, x.seat, x.player, x.char, at(5, 20, 0))
		s.exec(`INSERT INTO characters (table_id, id, player_id, seat, name, class, backstory, level, xp, hp, max_hp, gold, stats, weapon, armour, location, statuses)
			VALUES (?, ?, ?, ?, ?, ?, 'A backstory.', 2, 120, 9, 12, 15, '{"str":12}', 'sword', 'leather', 'square', '[]')`,
			x.table, x.char, x.player, x.seat, x.name, x.class)
	}
	s.exec(`INSERT INTO npcs (table_id, id, name, kind, location, hostile, behavior, disposition, faction, personality, tactics, secret, lines, level, hp, max_hp, stats, weapon, armour, gold, hidden, statuses)
		VALUES ('t1', 'n1', 'Miller', 'human', 'square', 0, 'calm', 10, 'village', 'gruff', 'flee', ?, 'null', 1, 5, 5, '{}', 'club', 'none', 3, 0, '[]')`, Secrets[4])
	s.exec(`INSERT INTO game_state (table_id, game, rng, world_start, updated_at) VALUES ('t1', '{}', ?, 'square', ?)`, js(Secrets[5]), at(7, 12, 0))

	// Turns: (table, day, hour) — one action, dice and narration each.
	turns := []struct {
		table      string
		day, hour  int
		agent      string
		actionSeat string
		player     string
	}{
		{"t1", 31, 20, "narrative", "s1", "p1"}, // October: before this week
		{"t1", 31, 21, "narrative", "s2", "p2"},
		{"t1", 3, 20, "combat", "s1", "p1"},
		{"t1", 4, 20, "combat", "s2", "p2"},
		{"t1", 6, 20, "narrative", "s1", "p1"},
		{"t1", 7, 20, "combat", "s1", "p1"},
		{"t2", 3, 9, "narrative", "s1", "p3"},
		{"t2", 4, 9, "combat", "s1", "p3"},
		{"t2", 5, 9, "narrative", "s1", "p3"},
		{"t3", 6, 21, "narrative", "s1", "p1"},
		{"t3", 6, 22, "combat", "s2", "p4"},
		{"t3", 7, 21, "combat", "s1", "p1"},
		{"t3", 7, 22, "narrative", "s2", "p4"},
	}
	no := map[string]int{}
	for i, t := range turns {
		no[t.table]++
		turn := fmt.Sprintf("t%d", no[t.table])
		month := 11
		if t.day > 10 {
			month = 10
		}
		ts := time.Date(2026, time.Month(month), t.day, t.hour, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000000000Z07:00")
		action := fmt.Sprintf("a%d", i+1)
		s.exec(`INSERT INTO pending_actions (table_id, id, player_id, character_id, seat, client_id, text, status, created_at, resolved_at)
			VALUES (?, ?, ?, ?, ?, ?, 'I look around.', 'resolved', ?, ?)`, t.table, action, t.player, "c"+t.actionSeat[1:], t.actionSeat, "cl"+action, ts, ts)
		s.event(t.table, ts, "action", turn, map[string]any{"player_id": t.player, "text": "I look around.", "action_id": action})
		s.event(t.table, ts, "dice", turn, map[string]any{"roller": "pc:" + t.actionSeat, "purpose": "attack", "notation": "1d20+2", "rolls": []int{10 + i%8}, "modifier": 2, "total": 12 + i%8})
		s.event(t.table, ts, "narration", turn, map[string]any{"agent": t.agent, "text": "The DM describes what happens.", "action_id": action})
	}
	s.exec(`INSERT INTO pending_actions (table_id, id, player_id, character_id, seat, client_id, text, status, created_at)
		VALUES ('t2', 'a99', 'p3', 'c1', 's1', 'cl99', 'I wait.', 'pending', ?)`, at(8, 11, 0))

	// Fights: (table, id, day, rounds, outcome, xp, gold).
	fights := []struct {
		table, id     string
		day, rounds   int
		outcome       string
		xp, gold, hit int
	}{
		{"t1", "c1", 3, 3, "player_win", 50, 10, 4},
		{"t1", "c2", 4, 2, "player_die", 0, 0, 7},
		{"t1", "c3", 7, 1, "player_flee", 0, 0, 3},
		{"t2", "c1", 4, 4, "player_win", 80, 25, 5},
		{"t3", "c1", 6, 5, "player_die", 0, 0, 9},
		{"t3", "c2", 7, 2, "player_win", 30, 5, 2},
	}
	for _, f := range fights {
		start := time.Date(2026, 11, f.day, 23, 0, 0, 0, time.UTC)
		s.event(f.table, start.Format("2006-01-02T15:04:05.000000000Z07:00"), "combat_started", "", map[string]any{"combat_id": f.id, "location": "square", "initiative": []any{}})
		for r := 1; r <= f.rounds; r++ {
			ts := start.Add(time.Duration(r) * time.Minute).Format("2006-01-02T15:04:05.000000000Z07:00")
			s.event(f.table, ts, "turn", "", map[string]any{"round": r, "index": 0, "entry": map[string]any{"id": "pc:s1"}})
			s.event(f.table, ts, "damage", "", map[string]any{"target": "Goblin", "amount": f.hit, "hp": 3, "max_hp": 10})
		}
		end := start.Add(time.Duration(f.rounds+1) * time.Minute).Format("2006-01-02T15:04:05.000000000Z07:00")
		loot := []string{}
		if f.gold > 0 {
			loot = []string{"potion"}
		}
		s.event(f.table, end, "combat_ended", "", map[string]any{"combat_id": f.id, "outcome": f.outcome, "rewards": map[string]any{"xp": f.xp, "gold": f.gold, "loot": loot}})
	}

	// Model calls: (day, model, agent, latency, prompt, cached, completion, cost, error).
	calls := []struct {
		day                     int
		model, agent            string
		latency, prompt, cached int
		completion              int
		cost                    float64
		err                     string
	}{
		{3, "gpt-4o-mini", "narrative", 800, 1000, 0, 200, 0.01, ""},
		{3, "gpt-4o", "combat", 1500, 2000, 500, 300, 0.05, ""},
		{4, "gpt-4o-mini", "narrative", 900, 1200, 200, 250, 0.01, ""},
		{4, "gpt-4o", "combat", 30000, 2000, 0, 0, 0.0, "POST \"https://api.example/v1/chat/completions\": context deadline exceeded"},
		{5, "gpt-4o-mini", "summary", 700, 3000, 0, 400, 0.02, ""},
		{5, "gpt-4o", "narrative", 1600, 2500, 1000, 350, 0.10, ""},
		{6, "gpt-4o-mini", "narrative", 850, 1100, 300, 220, 0.01, ""},
		{6, "gpt-4o", "combat", 200, 0, 0, 0, 0.0, "POST \"https://api.example/v1/chat/completions\": 429 Too Many Requests"},
		{7, "gpt-4o-mini", "combat", 950, 1300, 0, 260, 0.01, ""},
		{7, "gpt-4o", "narrative", 1700, 2600, 1200, 380, 0.15, ""},
	}
	for _, c := range calls {
		s.exec(`INSERT INTO llm_calls (table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens, cached_tokens, cost_usd, error)
			VALUES ('t1', ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.agent, c.model, at(c.day, 20, 0), c.latency, c.prompt, c.completion, c.cached, c.cost, c.err)
	}

	// Agent histories with tool calls and their results.
	type call struct{ name, result string }
	histories := []struct {
		table, agent string
		turn, day    int
		calls        []call
	}{
		{"t1", "combat", 3, 3, []call{{"attack", "You hit the goblin for 4."}, {"attack", "Error: Goblin 2 is already dead; living targets: Goblin 1."}, {"narrate", "Turn ended."}}},
		{"t1", "combat", 4, 4, []call{{"fireball", "Unknown tool \"fireball\". Available tools: attack, move, narrate."}, {"attack", "Error: Goblin 1 is out of reach."}, {"narrate", "Turn ended."}}},
		{"t1", "narrative", 5, 6, []call{{"move", "You walk to the mill."}, {"move", "Error: There is no exit called \"cellar\"; exits: square, mill."}, {"narrate", "Turn ended."}}},
		{"t3", "combat", 2, 6, []call{{"attack", "You hit the skeleton for 6."}, {"narrate", "Turn ended."}}},
	}
	for _, h := range histories {
		ts := at(h.day, 20, 30)
		s.message(h.table, h.agent, h.turn, ts, map[string]any{"role": "user", "content": "Resolve the action."})
		var tcs []any
		for i, c := range h.calls {
			tcs = append(tcs, map[string]any{"id": fmt.Sprintf("call_%d", i+1), "type": "function",
				"function": map[string]any{"name": c.name, "arguments": `{}`}})
		}
		s.message(h.table, h.agent, h.turn, ts, map[string]any{"role": "assistant", "content": "", "tool_calls": tcs})
		for i, c := range h.calls {
			s.message(h.table, h.agent, h.turn, ts, map[string]any{"role": "tool", "content": c.result, "tool_call_id": fmt.Sprintf("call_%d", i+1)})
		}
	}
}

func (s *seeder) message(table, agent string, turn int, ts string, body map[string]any) {
	s.exec(`INSERT INTO agent_messages (table_id, agent, turn, body, created_at) VALUES (?, ?, ?, ?, ?)`, table, agent, turn, js(body), ts)
}

// BigName is the name [MustSetBigName] gives table t1: n bytes of "a",
// with a two-byte "é" at bytes 65,536–65,537, so a cut at 64 KiB splits a
// character. n must exceed 65,537.
func BigName(n int) string {
	const at = 64<<10 - 1
	return strings.Repeat("a", at) + "é" + strings.Repeat("b", n-at-2)
}

// MustSetBigName renames table t1 of the seeded database at path to
// BigName(n): a cell far over any bound a result keeps (v_tables.name).
func MustSetBigName(tb testing.TB, path string, n int) {
	tb.Helper()
	w, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	defer w.Close()
	if _, err := w.Exec(`UPDATE tables SET name = ? WHERE id = 't1'`, BigName(n)); err != nil {
		tb.Fatalf("set a big name: %v", err)
	}
}
