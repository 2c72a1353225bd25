package db

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// turnCommit is turn n of agentName's history, two messages of about
// bodySize bytes each, as a turn's commit carries it.
func turnCommit(tableID, agentName string, n, bodySize int) store.Commit {
	pad := strings.Repeat("x", bodySize)
	return store.Commit{TableID: tableID, Messages: []store.AgentMessage{
		{Agent: agentName, Turn: n, Body: json.RawMessage(fmt.Sprintf(`{"role":"user","content":"Turn %d. %s"}`, n, pad))},
		{Agent: agentName, Turn: n, Body: json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":"Narration %d. %s"}`, n, pad))},
	}}
}

// TestArchiveWithTurn: a turn's commit carries the archive its window calls
// for; once it is committed, the memory holds every active message up to
// its last turn (older ones a failed archive left behind included), the
// turn's own messages stay active, and the caller's Memory is the stored
// one. Reopening the file finds both.
func TestArchiveWithTurn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	d := MustOpenDBAt(t, path)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	for n := 1; n <= 6; n++ {
		if err := d.Commit(ctx, turnCommit("t1", engine.AgentNarrative, n, 10)); err != nil {
			t.Fatal(err)
		}
	}
	c := turnCommit("t1", engine.AgentNarrative, 7, 10)
	// The summary saw turns 3-4 only: turns 1-2 go too.
	c.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 3, LastTurn: 4, Messages: 4, Title: "The mill", Summary: "Snikket."}
	if err := d.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	m := *c.Archive
	if m.ID == 0 || m.TableID != "t1" || m.Messages != 8 || m.FirstTurn != 1 || m.LastTurn != 4 || m.CreatedAt.IsZero() || m.Keywords == nil {
		t.Fatalf("stored memory %+v", m)
	}
	d.Close()
	d = MustOpenDBAt(t, path)
	mems, err := d.Memories(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 || mems[0].ID != m.ID || mems[0].Messages != 8 || mems[0].FirstTurn != 1 {
		t.Fatalf("memories after reopen %+v, want %+v", mems, m)
	}
	active, _ := d.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if len(active) != 6 || active[0].Turn != 5 || active[5].Turn != 7 {
		t.Fatalf("active after archive: %d messages, turns %v", len(active), active)
	}
	if _, msgs, err := d.MemorySession(ctx, "t1", m.ID); err != nil || len(msgs) != 8 {
		t.Fatalf("session: %d messages, %v", len(msgs), err)
	}
	if got := count(t, d.reader, "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'snikket'"); got != 1 {
		t.Errorf("the memory is indexed %d times, want 1", got)
	}
}

// TestArchiveFailsWithTurn: a turn's commit that fails writes neither the
// turn nor its archive — whether the turn fails (a duplicate action) or the
// archive does (nothing left to archive) — and its batch-mates are
// committed; the caller's Memory is left as it was.
func TestArchiveFailsWithTurn(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	mustCreateTable(t, d, "t2", newState(t, ""))
	for n := 1; n <= 4; n++ {
		for _, id := range []string{"t1", "t2"} {
			if err := d.Commit(ctx, turnCommit(id, engine.AgentNarrative, n, 10)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Commit(ctx, ack("t1", 1, "k1")); err != nil {
		t.Fatal(err)
	}
	dup := turnCommit("t1", engine.AgentNarrative, 5, 10)
	dup.AddPending = ack("t1", 2, "k1").AddPending // the client id of a stored action
	dup.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 2, Title: "a"}
	empty := turnCommit("t1", engine.AgentNarrative, 5, 10)
	empty.Archive = &store.Memory{Agent: engine.AgentCombat, FirstTurn: 1, LastTurn: 2, Title: "b"} // no combat history
	good := turnCommit("t2", engine.AgentNarrative, 5, 10)
	good.Archive = &store.Memory{Agent: engine.AgentNarrative, FirstTurn: 1, LastTurn: 2, Title: "c"}
	batch, results := requests(dup, empty, good)
	d.committer.apply(batch)
	for i, want := range []string{engine.ECONFLICT, engine.ECONFLICT, ""} {
		if err := <-results[i]; engine.ErrorCode(err) != want || (err == nil) != (want == "") {
			t.Errorf("commit %d: err %v, want code %q", i, err, want)
		}
	}
	if got := count(t, d.reader, "SELECT count(*) FROM memories WHERE table_id = 't1'"); got != 0 {
		t.Errorf("%d memories of t1 written by failed commits", got)
	}
	if got := count(t, d.reader, "SELECT count(*) FROM agent_messages WHERE table_id = 't1' AND (turn = 5 OR coalesce("+archivedSQL+", 0))"); got != 0 {
		t.Errorf("%d messages of t1 written or archived by failed commits", got)
	}
	if dup.Archive.ID != 0 || empty.Archive.ID != 0 || dup.Archive.Messages != 0 {
		t.Errorf("failed archives were filled in: %+v %+v", dup.Archive, empty.Archive)
	}
	if good.Archive.ID == 0 || good.Archive.Messages != 4 {
		t.Errorf("batch-mate's archive %+v", good.Archive)
	}
	if got := count(t, d.reader, "SELECT count(*) FROM agent_messages WHERE table_id = 't2' AND NOT coalesce("+archivedSQL+", 0)"); got != 6 {
		t.Errorf("t2 has %d active messages, want 6 (turns 3-5)", got)
	}
}

// TestQueuedActionStateNeverReopens races queued action states against the
// commits that resolve or abandon the actions: whatever the interleaving,
// a closed action stays closed with its final state, and an open one has
// the last state queued for it. A state queued before a Commit is called
// is written when that commit returns, and Close writes what is queued.
func TestQueuedActionStateNeverReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	d := MustOpenDBAt(t, path)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	const actions = 24
	for i := range actions {
		if err := d.Commit(ctx, ack("t1", int64(i+1), fmt.Sprintf("k%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range actions {
		id := fmt.Sprintf("a%d", i+1)
		wg.Add(2)
		go func() { // the table goroutine's life of the action
			defer wg.Done()
			for n := range 50 {
				state := []string{store.ActionRunning, store.ActionFailed, store.ActionPending}[n%3]
				d.QueueActionState("t1", store.ActionLife{ActionID: id, State: state, Attempts: n})
			}
		}()
		go func() { // its resolution, at some point of that life
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			for range rng.IntN(50) {
				d.QueueActionState("t1", store.ActionLife{ActionID: "other", State: store.ActionRunning})
			}
			c := store.Commit{TableID: "t1", Resolve: []string{id}}
			if i%4 == 3 {
				c = store.Commit{TableID: "t1", Abandon: []string{id}}
			}
			if i%2 == 0 { // every other action stays open
				c = store.Commit{TableID: "t1"}
			}
			if err := d.Commit(ctx, c); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Queued before this commit: written when it returns.
	d.QueueActionState("t1", store.ActionLife{ActionID: "a1", State: store.ActionFailed, Attempts: 99, Error: "503"})
	if err := d.Commit(ctx, store.Commit{TableID: "t1"}); err != nil {
		t.Fatal(err)
	}
	if l, _ := d.ActionStates(ctx, "t1"); l["a1"].Attempts != 99 || l["a1"].Error != "503" {
		t.Errorf("a1 after a later commit: %+v", l["a1"])
	}
	d.QueueActionState("t1", store.ActionLife{ActionID: "a3", State: store.ActionRunning, Attempts: 7})
	d.Close()
	d = MustOpenDBAt(t, path)
	for i := range actions {
		id := fmt.Sprintf("a%d", i+1)
		var status, state string
		var attempts int
		if err := d.reader.QueryRow("SELECT status, state, attempts FROM pending_actions WHERE table_id = 't1' AND id = ?", id).Scan(&status, &state, &attempts); err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0:
			if status != engine.ActionPending || state != store.ActionFailed || attempts != 99 {
				t.Errorf("%s: %s %s %d", id, status, state, attempts)
			}
		case i == 2:
			if state != store.ActionRunning || attempts != 7 {
				t.Errorf("%s: queued before Close: %s %d", id, state, attempts)
			}
		case i%2 == 0:
			if status != engine.ActionPending || attempts != 49 {
				t.Errorf("%s: open action with %s %s %d, want the last state queued (attempts 49)", id, status, state, attempts)
			}
		case i%4 == 3:
			if status != "resolved" || state != store.ActionAbandoned {
				t.Errorf("%s reopened: %s %s", id, status, state)
			}
		default:
			if status != "resolved" || state != store.ActionResolved {
				t.Errorf("%s reopened: %s %s", id, status, state)
			}
		}
	}
}

// TestLogCalls: a batch of calls is logged in one transaction, all of
// them; the log reads them back newest first.
func TestLogCalls(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	var calls []store.LLMCall
	for i := range 5 {
		calls = append(calls, store.LLMCall{TableID: "t1", Agent: "narrative", Model: "m", Started: t0.Add(time.Duration(i) * time.Second),
			Latency: 1500 * time.Millisecond, PromptTokens: i})
	}
	if err := d.LogCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	got, err := d.Calls(ctx, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].PromptTokens != 4 || got[4].LatencyMS != 1500 {
		t.Fatalf("calls %+v", got)
	}
}
