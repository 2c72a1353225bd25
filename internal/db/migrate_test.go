package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"tavern/internal/engine"
	"tavern/internal/store"
	"tavern/migrations"
)

// TestUpgradeToWriteIndexes stores a played and archived history, takes
// the file back to migration 7 (the indexes and search trigger before
// the group-commit write path), and reopens it: migrations 0008 and 0009 swap
// the indexes and the trigger, every history read gives what it gave, the
// search finds old and new memories, and the reads that need an index
// still find one.
func TestUpgradeToWriteIndexes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	ctx := context.Background()
	d := MustOpenDBAt(t, path)
	mustCreateTable(t, d, "t1", newState(t, ""))
	const turns = 8
	for n := 1; n <= turns; n++ {
		c := turnCommit("t1", engine.AgentNarrative, n, 10)
		c.Events = []engine.Event{{Seq: int64(n), TS: t0.Add(time.Duration(n) * time.Minute), Kind: engine.EventNarration, Turn: fmt.Sprintf("t%d", n), Data: raw(map[string]any{"text": "x"})}}
		if n == 6 {
			c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 4, Title: "The mill", Summary: "Snikket."}
		}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	raw := migrateDownTo(t, path, 7) // before 0008 and 0009
	if n := count(t, raw, "SELECT count(*) FROM sqlite_master WHERE name IN ('agent_messages_history', 'events_kind')"); n != 2 {
		t.Fatalf("at migration 7: %d of the old indexes, want 2", n)
	}
	raw.Close()

	d = MustOpenDBAt(t, path)
	if n := count(t, d.reader, "SELECT count(*) FROM sqlite_master WHERE name IN ('agent_messages_history', 'events_kind')"); n != 0 {
		t.Errorf("after the upgrade: %d of the old indexes, want 0", n)
	}
	all, err := d.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil || len(all) != 2*turns {
		t.Fatalf("whole history: %d messages (%v), want %d", len(all), err, 2*turns)
	}
	for i, m := range all {
		if m.Turn != i/2+1 || !strings.Contains(string(m.Body), fmt.Sprintf(" %d. ", m.Turn)) {
			t.Errorf("message %d: turn %d, %s", i, m.Turn, m.Body)
		}
	}
	active, err := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil || len(active) != 2*(turns-4) || active[0].Turn != 5 {
		t.Errorf("active history: %v (%v), want turns 5-%d", active, err, turns)
	}
	last, err := d.History(ctx, "t1", engine.AgentNarrative, 4)
	if err != nil || len(last) != 4 || last[0].Turn != turns-1 {
		t.Errorf("last 4 messages: %v (%v), want turns %d-%d", last, err, turns-1, turns)
	}
	progress, err := d.TableProgress(ctx)
	if err != nil || !progress["t1"].LastTurnAt.Equal(t0.Add(turns*time.Minute)) {
		t.Errorf("progress %+v (%v), last turn want %v", progress["t1"], err, t0.Add(turns*time.Minute))
	}
	// A memory archived after the upgrade is indexed at commit time, the
	// old one by the trigger it had: both are found, and the index matches
	// the memories.
	c := turnCommit("t1", engine.AgentNarrative, turns+1, 10)
	c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 5, LastTurn: 6, Title: "The bridge", Summary: "A troll."}
	if err := d.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"mill", "troll"} {
		if found, err := d.SearchMemories(ctx, "t1", q, 5); err != nil || len(found) != 1 {
			t.Errorf("search %q: %v (%v), want one memory", q, found, err)
		}
	}
	if _, err := d.writer.conn.ExecContext(context.Background(), "INSERT INTO memories_fts (memories_fts) VALUES ('integrity-check')"); err != nil {
		t.Errorf("search index: %v", err)
	}
	for _, c := range []struct {
		q     string
		args  []any
		index string
	}{
		{qArchiveRange, []any{"t1", engine.AgentNarrative, 4}, "agent_messages_turn"}, // since 0012
		{wholeHistory, []any{"t1", engine.AgentNarrative}, "agent_messages_turn"},
		{"SELECT " + lastTurnAt + " FROM tables t", nil, "events_narration"},
	} {
		if plan := queryPlan(t, d.reader, c.q, c.args...); !strings.Contains(plan, "INDEX "+c.index) {
			t.Errorf("plan of %q does not use %s:\n%s", c.q, c.index, plan)
		}
	}
}

// queryPlan returns the EXPLAIN QUERY PLAN of q, one step a line.
func queryPlan(tb testing.TB, db *sql.DB, q string, args ...any) string {
	tb.Helper()
	var b strings.Builder
	err := each(context.Background(), db, "EXPLAIN QUERY PLAN "+q, args, func(r *sql.Rows) error {
		var id, parent, unused int
		var detail string
		if err := r.Scan(&id, &parent, &unused, &detail); err != nil {
			return err
		}
		b.WriteString(detail + "\n")
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

// TestActiveIndexHoldsTurns takes a file with active and archived history
// back to migration 11, then 9, and up again: migration 0010's index of
// the active histories holds each message's turn, so an archive counted
// its messages from the index alone; down, the index of 0008 is back;
// either way the history reads and an archive give what they gave.
func TestActiveIndexHoldsTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	ctx := context.Background()
	d := MustOpenDBAt(t, path)
	mustCreateTable(t, d, "t1", newState(t, ""))
	for n := 1; n <= 6; n++ {
		c := turnCommit("t1", engine.AgentNarrative, n, 10)
		if n == 5 {
			c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 2, Title: "The mill", Summary: "Snikket."}
		}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	indexSQL := func(db *sql.DB) string {
		t.Helper()
		var s string
		if err := db.QueryRow("SELECT sql FROM sqlite_master WHERE name = 'agent_messages_active'").Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	raw := migrateDownTo(t, path, 11) // the index of 0010, before 0012 dropped it
	const withTurn = "(table_id, agent, id, turn, memory_id) WHERE memory_id IS NULL"
	if s := indexSQL(raw); !strings.Contains(s, withTurn) {
		t.Fatalf("index at migration 11: %s", s)
	}
	// The archive's range as it was read up to migration 11.
	const rangeAt11 = `SELECT count(*), coalesce(min(turn), 0) FROM agent_messages
WHERE table_id = ? AND agent = ? AND memory_id IS NULL AND turn <= ?`
	if plan := queryPlan(t, raw, rangeAt11, "t1", engine.AgentNarrative, 4); !strings.Contains(plan, "COVERING INDEX agent_messages_active") {
		t.Errorf("the archive's range does not read the index alone:\n%s", plan)
	}
	raw.Close()
	raw = migrateDownTo(t, path, 9)
	if s := indexSQL(raw); !strings.Contains(s, "(table_id, agent, id) WHERE memory_id IS NULL") {
		t.Errorf("index at migration 9: %s", s)
	}
	var active int
	if err := raw.QueryRow(`SELECT count(*) FROM agent_messages INDEXED BY agent_messages_active
		WHERE table_id = 't1' AND agent = ? AND memory_id IS NULL`, engine.AgentNarrative).Scan(&active); err != nil || active != 8 {
		t.Errorf("active messages through the index at migration 9: %d (%v), want 8", active, err)
	}
	raw.Close()

	d = MustOpenDBAt(t, path)
	c := turnCommit("t1", engine.AgentNarrative, 7, 10)
	c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 3, LastTurn: 4, Title: "The bridge", Summary: "A troll."}
	if err := d.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.Archive.Messages != 4 || c.Archive.FirstTurn != 3 {
		t.Errorf("archive after the upgrade: %+v, want 4 messages from turn 3", *c.Archive)
	}
	active2, err := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil || len(active2) != 6 || active2[0].Turn != 5 {
		t.Errorf("active history: %v (%v), want turns 5-7", active2, err)
	}
	all, err := d.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil || len(all) != 14 {
		t.Errorf("whole history: %d messages (%v), want 14", len(all), err)
	}
}

// migrateDownTo opens the closed database at path apart from a DB and
// migrates it down to version; the caller closes it.
func migrateDownTo(t *testing.T, path string, version int64) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path+"?"+writerParams)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestUnreadIndexesDropped takes a file with model calls and NPCs back to
// migration 10 and up again: migration 0011 drops the two indexes no
// query read (down brings them back), and the call log's reads and a
// table's load give what they gave.
func TestUnreadIndexesDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	ctx := context.Background()
	d := MustOpenDBAt(t, path)
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	mustCreateTable(t, d, "t2", fightingState(t))
	for i := range 6 {
		c := benchCall(i)
		c.TableID = []string{"t1", "t2"}[i%2]
		c.Started = t0.Add(time.Duration(i) * time.Minute)
		if err := d.LogCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	const dropped = "SELECT count(*) FROM sqlite_master WHERE name IN ('llm_calls_table', 'npcs_location')"
	if n := count(t, d.reader, dropped); n != 0 {
		t.Fatalf("after the migrations: %d of the dropped indexes", n)
	}
	check := func(when string) {
		t.Helper()
		calls, err := d.Calls(ctx, "t1", 2)
		if err != nil || len(calls) != 2 || calls[0].TableID != "t1" || calls[0].PromptTokens != 904 || calls[1].PromptTokens != 902 {
			t.Errorf("%s: the last 2 calls of t1: %+v (%v)", when, calls, err)
		}
		since, err := d.CallsSince(ctx, t0.Add(time.Minute), "t2", 0)
		if err != nil || len(since) != 3 || since[0].PromptTokens != 901 {
			t.Errorf("%s: calls of t2 since a minute in: %+v (%v)", when, since, err)
		}
		td, err := d.LoadTable(ctx, "t1")
		if err != nil || len(td.State.World.NPCs) != len(st.World.NPCs) {
			t.Errorf("%s: t1 loads %d NPCs (%v), want %d", when, len(td.State.World.NPCs), err, len(st.World.NPCs))
		}
	}
	check("at migration 11")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	raw := migrateDownTo(t, path, 10)
	if n := count(t, raw, dropped); n != 2 {
		t.Errorf("at migration 10: %d of the dropped indexes, want 2", n)
	}
	raw.Close()

	d = MustOpenDBAt(t, path)
	if n := count(t, d.reader, dropped); n != 0 {
		t.Errorf("after the upgrade: %d of the dropped indexes", n)
	}
	check("after the upgrade")
}

// archivedSQL is true of an agent_messages row that a memory holds (the
// rule of migration 0012), false or NULL of an active one.
const archivedSQL = `turn <= (SELECT max(last_turn) FROM memories m
WHERE m.table_id = agent_messages.table_id AND m.agent = agent_messages.agent)`

// TestArchiveByTurn archives two blocks of one history and one of
// another, reads them, and takes the file back to migration 11 and up
// again: since migration 0012 a message's memory follows from its turn,
// the history reads find their rows through the indexes of 0012; down,
// memory_id is set again on exactly the messages each memory holds; and
// every read gives what it gave before.
func TestArchiveByTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	ctx := context.Background()
	d := MustOpenDBAt(t, path)
	for _, id := range []string{"t1", "t2"} {
		mustCreateTable(t, d, id, newState(t, ""))
	}
	var mems []*store.Memory
	road := &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 100, Title: "The road"}
	for n := 1; n <= 8; n++ {
		c := turnCommit("t1", engine.AgentNarrative, n, 10)
		switch n {
		case 4:
			c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 2, Title: "The mill"}
		case 7:
			c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 3, LastTurn: 5, Title: "The bridge"}
		}
		if c.Archive != nil {
			mems = append(mems, c.Archive)
		}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		other := turnCommit("t2", engine.AgentNarrative, n, 10)
		if n == 3 {
			// Past the history's end: the memory ends with its last message.
			other.Archive = road
			mems = append(mems, road)
		}
		if err := d.Commit(ctx, other); err != nil {
			t.Fatal(err)
		}
	}
	if got := *road; got.FirstTurn != 1 || got.LastTurn != 3 || got.Messages != 6 {
		t.Errorf("archive past the history's end: %+v, want turns 1-3, 6 messages", got)
	}
	if _, err := d.ArchiveHistory(ctx, store.Memory{TableID: "t1", Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 4, Title: "again"}); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Errorf("archiving archived turns again: %v, want ECONFLICT", err)
	}

	type reads struct {
		active, all map[string][]store.AgentMessage
		sessions    map[int64][]store.AgentMessage
	}
	read := func(when string) reads {
		t.Helper()
		r := reads{active: map[string][]store.AgentMessage{}, all: map[string][]store.AgentMessage{}, sessions: map[int64][]store.AgentMessage{}}
		for _, id := range []string{"t1", "t2"} {
			var err error
			if r.active[id], err = d.ActiveHistory(ctx, id, engine.AgentNarrative, 0); err != nil {
				t.Fatal(err)
			}
			if r.all[id], err = d.AllHistory(ctx, id, engine.AgentNarrative); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range mems {
			stored, msgs, err := d.MemorySession(ctx, m.TableID, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != stored.Messages || msgs[0].Turn != stored.FirstTurn || msgs[len(msgs)-1].Turn != stored.LastTurn {
				t.Errorf("%s: memory %d (turns %d-%d, %d messages) holds %v", when, m.ID, stored.FirstTurn, stored.LastTurn, stored.Messages, msgs)
			}
			r.sessions[m.ID] = msgs
		}
		return r
	}
	before := read("at migration 12")
	if a := before.active["t1"]; len(a) != 6 || a[0].Turn != 6 {
		t.Errorf("active history of t1: %v, want turns 6-8", a)
	}
	if a := before.active["t2"]; len(a) != 10 || a[0].Turn != 4 {
		t.Errorf("active history of t2: %v, want turns 4-8", a)
	}
	if n := len(before.all["t1"]); n != 16 {
		t.Errorf("whole history of t1: %d messages, want 16", n)
	}
	for _, c := range []struct {
		q       string
		indexes []string
	}{
		{qActiveHistory + " LIMIT ?3", []string{"INDEX agent_messages_turn (table_id=? AND agent=? AND turn>?)", "COVERING INDEX memories_last_turn"}},
		{qArchiveRange, []string{"COVERING INDEX agent_messages_turn", "COVERING INDEX memories_last_turn"}},
		{qMemoryMessages, []string{"INDEX agent_messages_turn (table_id=? AND agent=? AND turn>? AND turn<?)", "COVERING INDEX memories_last_turn"}},
	} {
		plan := queryPlan(t, d.reader, c.q, "t1", engine.AgentNarrative, 5)
		for _, index := range c.indexes {
			if !strings.Contains(plan, index) || strings.Contains(plan, "SCAN") {
				t.Errorf("plan of %q does not use %s alone:\n%s", c.q, index, plan)
			}
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	raw := migrateDownTo(t, path, 11)
	held := map[int64]int{}
	err := each(ctx, raw, "SELECT coalesce(memory_id, 0), count(*) FROM agent_messages GROUP BY 1", nil, func(r *sql.Rows) error {
		var id int64
		var n int
		err := r.Scan(&id, &n)
		held[id] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mems {
		if held[m.ID] != m.Messages {
			t.Errorf("at migration 11: %d messages in memory %d, want %d", held[m.ID], m.ID, m.Messages)
		}
	}
	if held[0] != 16 {
		t.Errorf("at migration 11: %d active messages, want 16", held[0])
	}
	raw.Close()

	d = MustOpenDBAt(t, path)
	if after := read("after the upgrade"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("reads after the upgrade:\n%v\nwant\n%v", after, before)
	}
}
