package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// MustOpenDB opens a fresh database file in a temporary directory (in a
// subdirectory Open must create) and closes it when the test ends.
func MustOpenDB(tb testing.TB) *DB {
	tb.Helper()
	return MustOpenDBAt(tb, filepath.Join(tb.TempDir(), "data", "tavern.db"))
}

// MustOpenDBAt opens the database file at path and closes it when the test
// ends.
func MustOpenDBAt(tb testing.TB, path string) *DB {
	tb.Helper()
	d, err := Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := d.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return d
}

// t0 is a time with a whole second, so its RFC3339Nano text has no fraction.
var t0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

var library = func() *adventures.Library {
	lib, err := adventures.Load()
	if err != nil {
		panic(err)
	}
	return lib
}()

// newState returns a fresh Greyhollow state.
func newState(tb testing.TB, ruleset string) *engine.State {
	tb.Helper()
	adv, ok := library.Get(adventures.Default)
	if !ok {
		tb.Fatalf("no adventure %q", adventures.Default)
	}
	return engine.NewState(engine.Config{Ruleset: ruleset, TurnTimeoutS: 90}, adv, library.Catalogue, 42)
}

// fightingState returns a Greyhollow state with three PCs (seats 1, 2, 10)
// at the mill, in a fight against the goblins, with a relationship, a
// buffed item and statuses set.
func fightingState(tb testing.TB) *engine.State {
	tb.Helper()
	st := newState(tb, "")
	d, err := engine.RestoreDice(st.RNG)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range []struct{ id, seat, player, name, class string }{
		{"c1", "1", "p1", "Aldric", "warrior"},
		{"c10", "10", "p10", "Bryn", "rogue"},
		{"c2", "2", "p2", "Cora", "cleric"},
	} {
		if _, err := st.AddCharacter(d, c.id, c.seat, c.player, engine.NewCharacterSpec{Name: c.name, Class: c.class, Backstory: "From " + c.seat}); err != nil {
			tb.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		tb.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		tb.Fatal(err)
	}
	st.Party[0].Statuses = append(st.Party[0].Statuses, engine.StatusDefending)
	st.World.NPCs["snikket"].Statuses = []string{engine.StatusOffBalance}
	st.World.Items["lantern-1"].Buffs = []string{"glows"}
	st.World.Relationships[engine.RelKey("c1", "maren")] = 15
	st.World.Relationships[engine.RelKey("snikket", "c2")] = -40
	st.Game.Turn = 7
	st.RNG = d.State()
	return st
}

func stateJSON(tb testing.TB, st *engine.State) string {
	tb.Helper()
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// assertSameState fails unless got encodes exactly as want (Catalogue is
// not encoded, so it is not compared).
func assertSameState(tb testing.TB, got, want *engine.State) {
	tb.Helper()
	g, w := stateJSON(tb, got), stateJSON(tb, want)
	if g == w {
		return
	}
	gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			tb.Fatalf("state differs at line %d:\n got: %s\nwant: %s", i+1, gl[i], wl[i])
		}
	}
	tb.Fatalf("state differs in length: got %d lines, want %d", len(gl), len(wl))
}

func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := engine.ErrorCode(err); got != code {
		tb.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

func mustCreateTable(tb testing.TB, d *DB, id string, st *engine.State, evs ...engine.Event) engine.Table {
	tb.Helper()
	t := engine.Table{ID: id, Name: "Table " + id, Adventure: adventures.Default, Config: st.Config, Seats: 4, OwnerID: "p1", CreatedAt: t0}
	if err := d.CreateTable(context.Background(), t, st, evs); err != nil {
		tb.Fatal(err)
	}
	return t
}

func mustLoad(tb testing.TB, d *DB, id string) store.TableData {
	tb.Helper()
	td, err := d.LoadTable(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return td
}

func count(tb testing.TB, db queryRower, q string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

func TestOpenTwiceSameFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	ctx := context.Background()
	first, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st := newState(t, "")
	mustCreateTable(t, first, "t1", st)

	// A second DB on the same file while the first is open, then a reopen
	// after both closed: migrations must be idempotent and data kept.
	second := MustOpenDBAt(t, path)
	assertSameState(t, mustLoad(t, second, "t1").State, st)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := first.Tables(ctx); err == nil {
		t.Errorf("Tables after Close succeeded")
	}
	third := MustOpenDBAt(t, path)
	assertSameState(t, mustLoad(t, third, "t1").State, st)
	if n := count(t, third.reader, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = 1"); n != 1 {
		t.Errorf("migration 1 recorded %d times, want 1", n)
	}
}

func TestOpenRejectsNonFilePaths(t *testing.T) {
	for _, path := range []string{"", ":memory:", "file:x.db?mode=memory", "x.db?_pragma=foreign_keys(0)"} {
		if d, err := Open(context.Background(), path); err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func TestPragmas(t *testing.T) {
	d := MustOpenDB(t)
	for _, c := range []struct {
		name string
		db   queryRower
		q    string
		want string
	}{
		{"writer journal", d.writer.conn, "PRAGMA journal_mode", "wal"},
		{"writer foreign keys", d.writer.conn, "PRAGMA foreign_keys", "1"},
		{"writer synchronous", d.writer.conn, "PRAGMA synchronous", "1"}, // NORMAL
		{"writer busy timeout", d.writer.conn, "PRAGMA busy_timeout", "5000"},
		{"writer query only", d.writer.conn, "PRAGMA query_only", "0"},
		{"writer checkpoints nothing itself", d.writer.conn, "PRAGMA wal_autocheckpoint", "0"},
		{"writer page cache", d.writer.conn, "PRAGMA cache_size", "-16384"},
		{"checkpointer journal", d.checkpointer.db, "PRAGMA journal_mode", "wal"},
		{"checkpointer busy timeout", d.checkpointer.db, "PRAGMA busy_timeout", "5000"},
		{"reader journal", d.reader, "PRAGMA journal_mode", "wal"},
		{"reader foreign keys", d.reader, "PRAGMA foreign_keys", "1"},
		{"reader busy timeout", d.reader, "PRAGMA busy_timeout", "5000"},
		{"reader query only", d.reader, "PRAGMA query_only", "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got string
			if err := c.db.QueryRowContext(context.Background(), c.q).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("%s = %q, want %q", c.q, got, c.want)
			}
		})
	}
	if n := d.writer.pool.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("writer max open conns = %d, want 1", n)
	}
	if _, err := d.reader.Exec("INSERT INTO players (id, name, token_hash, created_at) VALUES ('x', 'x', x'01', '')"); err == nil {
		t.Errorf("write through the read pool succeeded")
	}
}

// TestWriteLockAtBegin checks BEGIN IMMEDIATE: a write transaction holds
// the write lock from BEGIN, before it runs any statement; a failed one
// rolls back and lets go of it.
func TestWriteLockAtBegin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	d := MustOpenDBAt(t, path)
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	insert := "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, 'x', ?, '')"

	errRefused := errors.New("refused")
	err = d.write(context.Background(), func(*writeTx) error {
		if _, err := other.Exec(insert, "a", []byte{1}); err == nil {
			t.Errorf("another connection wrote while a write transaction was open")
		}
		return errRefused
	})
	if !errors.Is(err, errRefused) {
		t.Fatalf("write = %v, want %v", err, errRefused)
	}
	if _, err := other.Exec(insert, "b", []byte{2}); err != nil {
		t.Errorf("write after rollback: %v", err)
	}
}

// TestWriterOutlivesFailedTransactions: a transaction that fails, panics,
// or is left open (its ROLLBACK failed) does not stop the next one.
func TestWriterOutlivesFailedTransactions(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	insert := func(id string) func(w *writeTx) error {
		return func(w *writeTx) error {
			_, err := w.conn.ExecContext(ctx, "INSERT INTO players (id, name, token_hash, created_at) VALUES (?, 'x', ?, '')", id, []byte(id))
			return err
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("the panic was swallowed")
			}
		}()
		_ = d.write(ctx, func(w *writeTx) error {
			if err := insert("panicked")(w); err != nil {
				t.Fatal(err)
			}
			panic("boom")
		})
	}()
	if err := d.write(ctx, func(w *writeTx) error {
		if err := insert("failed")(w); err != nil {
			return err
		}
		return insert("failed")(w) // the primary key refuses it
	}); err == nil {
		t.Fatal("a duplicate insert succeeded")
	}
	// A transaction left open, as if its ROLLBACK had failed.
	if _, err := d.writer.begin.ExecContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.write(ctx, insert("kept")); err != nil {
		t.Fatalf("write after a transaction left open: %v", err)
	}
	for id, want := range map[string]int{"panicked": 0, "failed": 0, "kept": 1} {
		if n := count(t, d.reader, "SELECT count(*) FROM players WHERE id = ?", id); n != want {
			t.Errorf("player %q: %d rows, want %d", id, n, want)
		}
	}
}

func TestForeignKeysCascade(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st, engine.Event{Seq: 1, TS: t0, Kind: "join"})
	if err := d.Commit(ctx, store.Commit{
		TableID:    "t1",
		Messages:   []store.AgentMessage{{Agent: engine.AgentNarrative, Turn: 1, Body: json.RawMessage(`{"role":"user"}`)}},
		AddSeat:    &engine.Seat{Seat: "1", PlayerID: "p1", CharacterID: "c1", JoinedAt: t0},
		AddPending: &engine.PendingAction{ID: "a1", PlayerID: "p1", ClientID: "k1", CreatedAt: t0},
	}); err != nil {
		t.Fatal(err)
	}
	children := []string{"seats", "characters", "locations", "npcs", "item_templates", "items", "quests", "relationships", "game_state", "events", "agent_messages", "pending_actions"}
	for _, tbl := range children {
		if n := count(t, d.writer.conn, "SELECT COUNT(*) FROM "+tbl+" WHERE table_id = 't1'"); n == 0 {
			t.Fatalf("%s: no rows before delete", tbl)
		}
	}
	if _, err := d.writer.conn.ExecContext(ctx, "DELETE FROM tables WHERE id = 't1'"); err != nil {
		t.Fatal(err)
	}
	for _, tbl := range children {
		if n := count(t, d.writer.conn, "SELECT COUNT(*) FROM "+tbl); n != 0 {
			t.Errorf("%s: %d rows left after deleting the table", tbl, n)
		}
	}
}
