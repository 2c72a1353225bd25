package db

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// commitTurns stores n turns of two messages for agentName, turns from..from+n-1.
func commitTurns(t *testing.T, d *DB, tableID, agentName string, from, n int) {
	t.Helper()
	for turn := from; turn < from+n; turn++ {
		msgs := []store.AgentMessage{
			{Agent: agentName, Turn: turn, Body: json.RawMessage(fmt.Sprintf(`{"role":"user","content":"Turn %d. Aldric acts."}`, turn))},
			{Agent: agentName, Turn: turn, Body: json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":"Narration %d"}`, turn))},
		}
		if err := d.Commit(context.Background(), store.Commit{TableID: tableID, Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFTS5Available(t *testing.T) {
	d := MustOpenDB(t)
	var n int
	if err := d.writer.conn.QueryRowContext(context.Background(), "SELECT count(*) FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatal("modernc sqlite is built without FTS5")
	}
	if got := count(t, d.reader, "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'x'"); got != 0 {
		t.Fatalf("empty index matched %d", got)
	}
}

func TestArchiveSearchRecall(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	mustCreateTable(t, d, "t2", newState(t, ""))
	commitTurns(t, d, "t1", engine.AgentNarrative, 1, 12)
	commitTurns(t, d, "t1", engine.AgentCombat, 13, 2)
	commitTurns(t, d, "t2", engine.AgentNarrative, 1, 3)

	// The active window never starts mid-turn.
	act, err := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(act) != 4 || act[0].Turn != 11 {
		t.Fatalf("active window = %d messages from turn %d, want 4 from turn 11", len(act), act[0].Turn)
	}

	m, err := d.ArchiveHistory(ctx, store.Memory{TableID: "t1", Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 5,
		Title: "The goblin at the mill", Summary: "Aldric met Snikket the goblin by the old mill and lost the Lantern.",
		Keywords: []string{"Snikket", "lantern", "mill"}, Source: "extractive"})
	if err != nil {
		t.Fatal(err)
	}
	if m.ID == 0 || m.Messages != 10 {
		t.Fatalf("memory %+v", m)
	}
	all, _ := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if len(all) != 14 || all[0].Turn != 6 {
		t.Fatalf("active after archive: %d from turn %d", len(all), all[0].Turn)
	}
	if full, _ := d.AllHistory(ctx, "t1", engine.AgentNarrative); len(full) != 24 {
		t.Fatalf("all history %d", len(full))
	}
	// Archiving the same turns again finds nothing to move.
	if _, err := d.ArchiveHistory(ctx, store.Memory{TableID: "t1", Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 5, Title: "x", Summary: "y"}); engine.ErrorCode(err) != engine.ECONFLICT {
		t.Fatalf("re-archive: %v", err)
	}
	m2, err := d.ArchiveHistory(ctx, store.Memory{TableID: "t1", Agent: engine.AgentNarrative, FirstTurn: 6, LastTurn: 8,
		Title: "Wolves on the north road", Summary: "The party fled the wolves.", Keywords: []string{"wolves"}, Source: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	_ = m2

	cases := []struct {
		query string
		want  []int64
	}{
		{"snikket", []int64{m.ID}},
		{"Lanterns?", []int64{m.ID}}, // prefix match, punctuation ignored
		{"wolf OR mill", []int64{m.ID}},
		{"wolves", []int64{m2.ID}},
		{"\"; DROP TABLE memories; --", nil},
		{"", nil},
		{"dragon", nil},
	}
	for _, c := range cases {
		got, err := d.SearchMemories(ctx, "t1", c.query, 5)
		if err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		var ids []int64
		for _, g := range got {
			ids = append(ids, g.ID)
		}
		if fmt.Sprint(ids) != fmt.Sprint(c.want) {
			t.Errorf("search %q = %v, want %v", c.query, ids, c.want)
		}
	}
	if got, _ := d.SearchMemories(ctx, "t2", "snikket", 5); len(got) != 0 {
		t.Errorf("search leaks across tables: %v", got)
	}

	mem, msgs, err := d.MemorySession(ctx, "t1", m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if mem.Title != "The goblin at the mill" || len(msgs) != 10 || msgs[0].Turn != 1 || !strings.Contains(string(msgs[9].Body), "Narration 5") {
		t.Fatalf("session %+v %+v", mem, msgs)
	}
	if _, _, err := d.MemorySession(ctx, "t2", m.ID); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Fatalf("other table's session: %v", err)
	}

	// A new summary replaces the indexed text.
	mem.Title, mem.Summary, mem.Keywords = "Dragons", "A dragon.", []string{"dragon"}
	if err := d.UpdateMemory(ctx, mem); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.SearchMemories(ctx, "t1", "snikket", 5); len(got) != 0 {
		t.Errorf("old text still indexed: %v", got)
	}
	if got, _ := d.SearchMemories(ctx, "t1", "dragon", 5); len(got) != 1 {
		t.Errorf("new text not indexed: %v", got)
	}
	list, err := d.Memories(ctx, "t1", "", 0)
	if err != nil || len(list) != 2 || list[0].ID != m.ID || list[1].Source != "gpt-test" {
		t.Fatalf("memories %+v %v", list, err)
	}
	if last, _ := d.Memories(ctx, "t1", engine.AgentNarrative, 1); len(last) != 1 || last[0].ID != m2.ID {
		t.Fatalf("last memory %+v", last)
	}
}

func TestCallLog(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	calls := []store.LLMCall{
		{TableID: "t1", Agent: "narrative", Model: "gpt-4o-mini", Started: t0, LatencyMS: 820, PromptTokens: 3000, CompletionTokens: 120, CachedTokens: 2048, CostUSD: 0.0004},
		{TableID: "t1", Agent: "combat", Model: "gpt-4o-mini", Started: t0, LatencyMS: 60000, Error: "openai gpt-4o-mini: 3 attempt(s): 500"},
		{TableID: "t2", Agent: "summary", Model: "m", Started: t0},
	}
	for _, c := range calls {
		if err := d.LogCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Calls(ctx, "t1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Error == "" || got[1].CachedTokens != 2048 || got[1].CostUSD != 0.0004 || !got[1].Started.Equal(t0) {
		t.Fatalf("calls %+v", got)
	}
	if all, _ := d.Calls(ctx, "", 10); len(all) != 3 {
		t.Fatalf("all calls %d", len(all))
	}
}
