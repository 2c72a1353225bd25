package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// cacheEnv is a hub on a real SQLite file with one table, whose turns the
// tests commit by hand: the history cache is exercised without a model.
func cacheEnv(tb testing.TB) (*Hub, *table) {
	tb.Helper()
	ctx := context.Background()
	h, st := testHub(tb, nil)
	owner := engine.Player{ID: "p-ann", Name: "Ann"}
	if err := st.CreatePlayer(ctx, owner, []byte("tok")); err != nil {
		tb.Fatal(err)
	}
	ts, err := h.CreateTable(ctx, owner, TableSpec{Name: "Cache"})
	if err != nil {
		tb.Fatal(err)
	}
	t, err := h.table(ts.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return h, t
}

// turnMessages is one turn of an agent's history as a turn stores it: the
// player's message, a tool call, its result and the narration.
func turnMessages(agentName string, n int) []store.AgentMessage {
	words := strings.Repeat(fmt.Sprintf("word%d ", n), 30)
	msgs := []agent.Message{
		{Role: "user", Content: fmt.Sprintf("Turn %d. <context>\nstate %d\n</context>\nI look around, %s", n, n, words)},
		{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: fmt.Sprintf("call_%d", n), Type: "function",
			Function: agent.FunctionCall{Name: "roll", Arguments: `{"dice":"1d20"}`}}}},
		{Role: "tool", ToolCallID: fmt.Sprintf("call_%d", n), Content: `{"total":12}`},
		{Role: "assistant", Content: fmt.Sprintf("You see the square on turn %d. %s", n, words)},
	}
	out := make([]store.AgentMessage, 0, len(msgs))
	for _, m := range msgs {
		body, _ := json.Marshal(m)
		out = append(out, store.AgentMessage{Agent: agentName, Turn: n, Body: body})
	}
	return out
}

// commitTurn commits turn n of agentName's history as finish does: its
// messages with the archive they call for, then tells the cache.
func commitTurn(tb testing.TB, h *Hub, t *table, agentName string, n int) {
	tb.Helper()
	msgs := turnMessages(agentName, n)
	c := store.Commit{TableID: t.id, Messages: msgs,
		Archive: t.archiveAfter(context.Background(), agentName, n, agent.DecodeMessages(msgs))}
	err := h.cfg.Store.Commit(context.Background(), c)
	if err != nil {
		tb.Fatal(err)
	}
	t.remember(agentName, n, agent.DecodeMessages(msgs))
	t.archiving(c.Archive, nil)
	t.archived(c.Archive)
}

// cacheMatchesStore fails the test unless the context of agentName's turn
// n built from the table's cache equals the one built from the store alone.
func cacheMatchesStore(t *testing.T, h *Hub, tb *table, agentName string, n int) {
	t.Helper()
	ctx := context.Background()
	got, err := tb.historyContext(ctx, agentName)
	if err != nil {
		t.Fatal(err)
	}
	want, err := h.storeContext(ctx, tb.id, agentName, tb.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("turn %d, %s: context from the cache differs from the store's\ncache %+v\nstore %+v", n, agentName, got, want)
	}
}

// TestHistoryCacheEqualsStore plays turns by hand — each turn reads its
// context from the cache, then commits its messages with the archive they
// call for (when the window is full) and tells the cache — and checks
// after every turn that the
// context built from the cache equals the one built from the store alone,
// across several archives, and again after the cache is dropped.
func TestHistoryCacheEqualsStore(t *testing.T) {
	h, tb := cacheEnv(t)
	ctx := context.Background()
	const turns = 40
	for n := 1; n <= turns; n++ {
		for _, ag := range []string{engine.AgentNarrative, engine.AgentCombat} {
			if ag == engine.AgentCombat && n%3 != 0 {
				continue
			}
			cacheMatchesStore(t, h, tb, ag, n)
			commitTurn(t, h, tb, ag, n)
		}
	}
	mems, err := h.cfg.Store.Memories(ctx, tb.id, engine.AgentNarrative, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) < 3 {
		t.Fatalf("%d narrative memories after %d turns: the test did not archive", len(mems), turns)
	}
	cached, _ := tb.historyContext(ctx, engine.AgentNarrative)
	tb.hist.invalidate()
	reread, _ := tb.historyContext(ctx, engine.AgentNarrative)
	if !reflect.DeepEqual(cached, reread) {
		t.Fatalf("context after reloading the cache differs")
	}
}

// BenchmarkHistoryContext measures one turn's history context: read and
// decoded from the store (as before the history cache) and from the table's cache.
func BenchmarkHistoryContext(b *testing.B) {
	h, tb := cacheEnv(b)
	ctx := context.Background()
	for n := 1; n <= 30; n++ {
		if _, err := tb.historyContext(ctx, engine.AgentNarrative); err != nil {
			b.Fatal(err)
		}
		commitTurn(b, h, tb, engine.AgentNarrative, n)
	}
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.storeContext(ctx, tb.id, engine.AgentNarrative, tb.log); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache", func(b *testing.B) {
		for b.Loop() {
			if _, err := tb.historyContext(ctx, engine.AgentNarrative); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestHistoryCacheAfterFailedArchive: when the cache is wrong (history
// archived behind the table's back), the archive a turn proposes finds
// nothing to move and its commit fails whole; the cache is then read
// again, so the contexts agree with the store and the next turns commit.
func TestHistoryCacheAfterFailedArchive(t *testing.T) {
	h, tb := cacheEnv(t)
	ctx := context.Background()
	ag := engine.AgentNarrative
	n := 1
	for ; n <= 6; n++ {
		commitTurn(t, h, tb, ag, n)
	}
	st := h.cfg.Store.(deadlined).s.(*db.DB)
	if _, err := st.ArchiveHistory(ctx, store.Memory{TableID: tb.id, Agent: ag, FirstTurn: 1, LastTurn: n - 1, Title: "behind"}); err != nil {
		t.Fatal(err)
	}
	for ; ; n++ {
		if n > 60 {
			t.Fatal("no turn archived")
		}
		msgs := turnMessages(ag, n)
		c := store.Commit{TableID: tb.id, Messages: msgs, Archive: tb.archiveAfter(ctx, ag, n, agent.DecodeMessages(msgs))}
		if c.Archive == nil {
			if err := h.cfg.Store.Commit(ctx, c); err != nil {
				t.Fatal(err)
			}
			tb.remember(ag, n, agent.DecodeMessages(msgs))
			continue
		}
		err := h.cfg.Store.Commit(ctx, c)
		if engine.ErrorCode(err) != engine.ECONFLICT {
			t.Fatalf("turn %d: archive from a stale cache: %v, want ECONFLICT", n, err)
		}
		tb.archiving(c.Archive, err)
		break
	}
	for n++; n <= 40; n++ {
		cacheMatchesStore(t, h, tb, ag, n)
		commitTurn(t, h, tb, ag, n)
	}
}
