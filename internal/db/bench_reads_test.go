package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"tavern/internal/engine"
)

// The reads of a busy server's lobby and the operator's player page, on
// a store of benchTables tables: each with benchSeats players seated, and
// benchTurns turns played (an action, its narration and two model calls
// each, a chat line every other turn).

const (
	benchTables  = 2000
	benchPlayers = 500
	benchSeats   = 3
	benchTurns   = 20
	benchPlayer  = "p7" // owns 4 tables and sits at about 12
)

// benchReadStore fills a new store as above, rows written directly (a
// commit each would take minutes), and opens it.
func benchReadStore(b *testing.B) *DB {
	b.Helper()
	path := filepath.Join(b.TempDir(), "tavern.db")
	d, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	d.Close()
	raw, err := sql.Open("sqlite", path+"?"+writerParams)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	if err := fillReadStore(raw); err != nil {
		b.Fatal(err)
	}
	if d, err = Open(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

func fillReadStore(raw *sql.DB) error {
	tx, err := raw.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rng := rand.New(rand.NewPCG(1, 2))
	exec := func(q string, args ...any) {
		if err == nil {
			_, err = tx.Exec(q, args...)
		}
	}
	ts := func(i int) string { return formatTime(t0.Add(time.Duration(i) * time.Second)) }
	for i := range benchPlayers {
		exec("INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)",
			fmt.Sprintf("p%d", i), fmt.Sprintf("Player %d", i), []byte(fmt.Sprintf("h%d", i)), ts(i))
	}
	advs := []string{"greyhollow", "a1", "a2", "a3", "a4"}
	seq := 0
	for i := range benchTables {
		id := fmt.Sprintf("t%04d", i)
		exec(`INSERT INTO tables (id, name, adventure, ruleset, combat_mode, turn_timeout_s, seats, owner_id, created_at, private)
			VALUES (?, ?, ?, 'd100', 'tactical', 120, 4, ?, ?, ?)`,
			id, "Table "+id, advs[i%len(advs)], fmt.Sprintf("p%d", (i*7)%benchPlayers), ts(i), i%10 == 0)
		players := make([]engine.Player, benchSeats)
		for k := range players {
			players[k] = engine.Player{ID: fmt.Sprintf("p%d", (i*7+k*13+1)%benchPlayers), Name: "Someone"}
			cid, seat := fmt.Sprintf("c%d", k+1), fmt.Sprint(k+1)
			exec("INSERT INTO seats (table_id, seat, player_id, character_id, joined_at) VALUES (?, ?, ?, ?, ?)",
				id, seat, players[k].ID, cid, ts(i))
			exec(`INSERT INTO characters (table_id, id, player_id, seat, name, class, backstory, level, xp, hp, max_hp, gold,
				stats, weapon, armour, location, statuses) VALUES (?, ?, ?, ?, ?, 'warrior', 'A past.', 1, 0, 40, 45, 10, '{}', '', '', 'square', 'null')`,
				id, cid, players[k].ID, seat, "Hero "+cid)
		}
		event := func(e engine.Event, turn string) {
			seq++
			data, _ := json.Marshal(e.Data)
			exec("INSERT INTO events (table_id, seq, ts, kind, turn, data) VALUES (?, ?, ?, ?, ?, ?)", id, seq, ts(seq), e.Kind, turn, string(data))
		}
		for n := 1; n <= benchTurns; n++ {
			p := players[rng.IntN(len(players))]
			turn := fmt.Sprintf("t%d", n)
			a := engine.PendingAction{ID: fmt.Sprintf("a%d", n), PlayerID: p.ID, CharacterID: "c1", Seat: "1",
				ClientID: fmt.Sprintf("x%d", n), Text: "look around"}
			exec(`INSERT INTO pending_actions (table_id, id, player_id, character_id, seat, client_id, text, status, created_at, state)
				VALUES (?, ?, ?, ?, ?, ?, ?, 'resolved', ?, 'resolved')`, id, a.ID, a.PlayerID, a.CharacterID, a.Seat, a.ClientID, a.Text, ts(seq))
			event(engine.ActionEvent(a, "Hero"), "")
			event(engine.NarrationEvent(engine.AgentNarrative, "The square is quiet.", nil, a.ID), turn)
			if n%2 == 0 {
				event(engine.ChatEvent(p, "brb"), "")
			}
			for range 2 {
				exec(`INSERT INTO llm_calls (table_id, agent, model, started_at, latency_ms, prompt_tokens, completion_tokens,
					cached_tokens, cost_usd, error, turn) VALUES (?, 'narrative', 'm', ?, 800, 2000, 200, 0, 0.001, '', ?)`, id, ts(seq), turn)
			}
		}
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// BenchmarkLobbyStore is what the lobby asks of the store for a player
// signed in while a private table exists: the private tables they may
// see (hub.ListFor), their tables ("Your tables") and the adventures to
// choose from (not counted: adventures.Shelf.Titles). Before the lobby
// ran PlayerTables for both and counted every adventure's tables: 10.6
// ms/op (load average 18.9 on 2 cores).
func BenchmarkLobbyStore(b *testing.B) {
	d := benchReadStore(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := d.PrivateTableIDs(ctx, benchPlayer); err != nil {
			b.Fatal(err)
		}
		if _, err := d.PlayerTables(ctx, benchPlayer); err != nil {
			b.Fatal(err)
		}
		if _, err := d.Adventures(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdventureTables counts every adventure's tables, as the
// adventures page does (by the tables_adventure index).
func BenchmarkAdventureTables(b *testing.B) {
	d := benchReadStore(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := d.AdventureTables(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlayerTables is "my tables" of one player.
func BenchmarkPlayerTables(b *testing.B) {
	d := benchReadStore(b)
	ctx := context.Background()
	for b.Loop() {
		ts, err := d.PlayerTables(ctx, benchPlayer)
		if err != nil || len(ts) == 0 {
			b.Fatal(len(ts), err)
		}
	}
}

// BenchmarkPlayerDetail is the operator's page of one player.
func BenchmarkPlayerDetail(b *testing.B) {
	d := benchReadStore(b)
	ctx := context.Background()
	for b.Loop() {
		p, err := d.PlayerDetail(ctx, benchPlayer)
		if err != nil || p.Spend.Calls == 0 {
			b.Fatal(p.Spend, err)
		}
	}
}
