// Package storetest is the contract suite of Tavern's stores: the same
// tests run against internal/db (SQLite) and internal/pgdb (PostgreSQL),
// so that the two engines keep one behaviour. A store's test calls
// [Run] with a function that opens a new, empty store.
//
// What it checks: a commit lands whole or not at all; conflicts and
// missing tables answer ECONFLICT and ENOTFOUND; a chain stops at its
// first failure; a state comes back as written, also after commits that
// change or remove rows; events replay from any seq; a lost ack finds its
// action (resume); archives, the active history and memory search; the
// operator's reads.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// Store is what the suite uses of a store: the methods db.DB and pgdb.DB
// both have.
type Store interface {
	CreateTable(ctx context.Context, t engine.Table, st *engine.State, evs []engine.Event) error
	Tables(ctx context.Context) ([]engine.Table, error)
	TableInfos(ctx context.Context) ([]store.TableInfo, error)
	TableProgress(ctx context.Context) (map[string]store.TableProgress, error)
	LoadTable(ctx context.Context, id string) (store.TableData, error)
	Commit(ctx context.Context, c store.Commit) error
	Enqueue(ctx context.Context, c store.Commit, done func(error)) error
	Events(ctx context.Context, tableID string, since int64, limit int) ([]engine.Event, error)
	ActionByClientID(ctx context.Context, tableID, playerID, clientID string) (store.ActionLife, bool, error)
	ActiveHistory(ctx context.Context, tableID, agentName string, limit int) ([]store.AgentMessage, error)
	AllHistory(ctx context.Context, tableID, agentName string) ([]store.AgentMessage, error)
	Memories(ctx context.Context, tableID, agentName string, limit int) ([]store.Memory, error)
	UpdateMemory(ctx context.Context, m store.Memory) error
	SearchMemories(ctx context.Context, tableID, query string, limit int) ([]store.Memory, error)
	MemorySession(ctx context.Context, tableID string, id int64) (store.Memory, []store.AgentMessage, error)
	Calls(ctx context.Context, tableID string, limit int) ([]store.LLMCall, error)
	CallsSince(ctx context.Context, since time.Time, tableID string, limit int) ([]store.LLMCall, error)
	TurnTimes(ctx context.Context, since time.Time) ([]time.Time, error)
	TableFlags(ctx context.Context) (map[string]store.TableFlags, error)
	ActionStates(ctx context.Context, tableID string) (map[string]store.ActionLife, error)
	QueueActionState(tableID string, a store.ActionLife)
	CreatePlayer(ctx context.Context, p engine.Player, tokenHash []byte) error
	PlayerByTokenHash(ctx context.Context, hash []byte) (engine.Player, error)
	Conversation(ctx context.Context, id string) ([]store.AgentMessage, error)
	AppendConversation(ctx context.Context, id string, msgs []store.AgentMessage) error
	Close() error
}

// Run runs the suite; open returns a new, empty store for one test (the
// suite closes it).
func Run(t *testing.T, open func(t *testing.T) Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"StateRoundTrip", testStateRoundTrip},
		{"CommitAtomic", testCommitAtomic},
		{"Conflicts", testConflicts},
		{"Chains", testChains},
		{"Replay", testReplay},
		{"Resume", testResume},
		{"Archives", testArchives},
		{"MemorySearch", testMemorySearch},
		{"AdminReads", testAdminReads},
		{"PlayersAndConversations", testPlayersAndConversations},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

var ctx = context.Background()

var at = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

var library = func() *adventures.Library {
	lib, err := adventures.Load()
	if err != nil {
		panic(err)
	}
	return lib
}()

// fightingState is Greyhollow with three characters at the mill, in a
// fight, with statuses, a buffed item and relationships.
func fightingState(t *testing.T) *engine.State {
	t.Helper()
	adv, _ := library.Get(adventures.Default)
	st := engine.NewState(engine.Config{TurnTimeoutS: 90}, adv, library.Catalogue, 42)
	d, err := engine.RestoreDice(st.RNG)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, seat, player, name, class string }{
		{"c1", "1", "p1", "Aldric", "warrior"},
		{"c10", "10", "p10", "Bryn", "rogue"},
		{"c2", "2", "p2", "Cora", "cleric"},
	} {
		if _, err := st.AddCharacter(d, c.id, c.seat, c.player, engine.NewCharacterSpec{Name: c.name, Class: c.class, Backstory: "From " + c.seat}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := st.MoveParty(engine.NewDice(1), "", "mill"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	st.Party[0].Statuses = append(st.Party[0].Statuses, engine.StatusDefending)
	st.World.Items["lantern-1"].Buffs = []string{"glows"}
	st.World.Relationships[engine.RelKey("c1", "maren")] = 15
	st.Game.Turn = 7
	st.RNG = d.State()
	return st
}

func createTable(t *testing.T, s Store, id string, st *engine.State) {
	t.Helper()
	tb := engine.Table{ID: id, Name: "Table " + id, Adventure: adventures.Default, Config: st.Config, Seats: 12, OwnerID: "p1", CreatedAt: at}
	if err := s.CreateTable(ctx, tb, st, nil); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, s Store, id string) store.TableData {
	t.Helper()
	td, err := s.LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return td
}

func sameState(t *testing.T, got, want *engine.State) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("state differs:\n got: %s\nwant: %s", g, w)
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := engine.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// chat returns n chat events numbered from seq.
func chat(seq int64, n int) []engine.Event {
	var out []engine.Event
	for i := range n {
		ev := engine.ChatEvent(engine.Player{ID: "p1", Name: "Ann"}, fmt.Sprintf("line %d", seq+int64(i)))
		ev.Seq, ev.TS = seq+int64(i), at.Add(time.Duration(seq+int64(i))*time.Second)
		out = append(out, ev)
	}
	return out
}

func testStateRoundTrip(t *testing.T, s Store) {
	st := fightingState(t)
	createTable(t, s, "t1", st)
	sameState(t, load(t, s, "t1").State, st)

	// A turn changes a few rows and removes some: the next load sees
	// exactly the new state, whatever the store skipped writing.
	next := st.Clone()
	next.Party[1].HP -= 3
	next.World.NPCs["snikket"].Statuses = []string{engine.StatusOffBalance}
	delete(next.World.Items, "lantern-1")
	delete(next.World.Relationships, engine.RelKey("c1", "maren"))
	next.World.Relationships[engine.RelKey("c2", "maren")] = -5
	next.Game.Turn = 8
	if err := s.Commit(ctx, store.Commit{TableID: "t1", State: next}); err != nil {
		t.Fatal(err)
	}
	sameState(t, load(t, s, "t1").State, next)

	// Handing the same state again writes every row.
	if err := s.Commit(ctx, store.Commit{TableID: "t1", State: next}); err != nil {
		t.Fatal(err)
	}
	sameState(t, load(t, s, "t1").State, next)
}

func testCommitAtomic(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	p := engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k1", Text: "look", CreatedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: &p, Events: chat(1, 2)}); err != nil {
		t.Fatal(err)
	}
	// The same client id again, with events: ECONFLICT, and none of its
	// events are written.
	dup := p
	dup.ID = "a2"
	err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: &dup, Events: chat(3, 2)})
	wantCode(t, err, engine.ECONFLICT)
	evs, err := s.Events(ctx, "t1", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("%d events after a failed commit, want 2", len(evs))
	}
	// An event seq that exists fails the whole commit: its seat is not
	// taken either.
	seat := engine.Seat{Seat: "3", PlayerID: "p3", CharacterID: "c3", JoinedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", AddSeat: &seat, Events: chat(2, 1)}); err == nil {
		t.Fatal("a commit reusing seq 2 succeeded")
	}
	if td := load(t, s, "t1"); len(td.Seats) != 0 || td.Seq != 2 {
		t.Fatalf("after a failed commit: seats %v, seq %d; want none, 2", td.Seats, td.Seq)
	}
}

func testConflicts(t *testing.T, s Store) {
	st := fightingState(t)
	createTable(t, s, "t1", st)
	tb := engine.Table{ID: "t1", Name: "again", Adventure: adventures.Default, Config: st.Config, Seats: 4, CreatedAt: at}
	wantCode(t, s.CreateTable(ctx, tb, st, nil), engine.ECONFLICT)
	seat := engine.Seat{Seat: "1", PlayerID: "p1", CharacterID: "c1", JoinedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", AddSeat: &seat}); err != nil {
		t.Fatal(err)
	}
	other := engine.Seat{Seat: "1", PlayerID: "p2", CharacterID: "c2", JoinedAt: at}
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "t1", AddSeat: &other}), engine.ECONFLICT)
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Events: chat(1, 1)}), engine.ENOTFOUND)
	paused := true
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Paused: &paused}), engine.ENOTFOUND)
	_, err := s.LoadTable(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)
}

func testChains(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	// Three commits of one chain queued at once; the first fails (a seq
	// reused below), so the two behind it fail unapplied.
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: chat(1, 1)}); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 3)
	for _, evs := range [][]engine.Event{chat(1, 1), chat(2, 1), chat(3, 1)} {
		if err := s.Enqueue(ctx, store.Commit{TableID: "t1", Events: evs, Chain: 7}, func(err error) { res <- err }); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-res; err == nil || errors.Is(err, store.ErrChainBroken) {
		t.Fatalf("first of the chain: %v, want its own failure", err)
	}
	for range 2 {
		if err := <-res; !errors.Is(err, store.ErrChainBroken) {
			t.Fatalf("behind the failure: %v, want ErrChainBroken", err)
		}
	}
	// A new chain goes on.
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: chat(2, 1), Chain: 8}); err != nil {
		t.Fatal(err)
	}
	if td := load(t, s, "t1"); td.Seq != 2 {
		t.Fatalf("seq %d, want 2", td.Seq)
	}
}

func testReplay(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	want := chat(1, 20)
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: want}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Events(ctx, "t1", 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 || got[0].Seq != 6 || got[9].Seq != 15 {
		t.Fatalf("events since 5: %d, from %v", len(got), got)
	}
	for i, e := range got {
		w, _ := json.Marshal(want[5+i])
		g, _ := json.Marshal(e)
		if string(g) != string(w) {
			t.Fatalf("replayed %s, want %s", g, w)
		}
	}
	if got, _ := s.Events(ctx, "t1", 20, 10); len(got) != 0 {
		t.Fatalf("%d events past the last", len(got))
	}
}

func testResume(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	for i, id := range []string{"a1", "a2", "a3"} {
		p := engine.PendingAction{ID: id, PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k" + id, Text: "act", CreatedAt: at.Add(time.Duration(i) * time.Second)}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: &p}); err != nil {
			t.Fatal(err)
		}
	}
	s.QueueActionState("t1", store.ActionLife{ActionID: "a3", State: store.ActionFailed, Attempts: 2, Error: "model down"})
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Resolve: []string{"a1"}, Abandon: []string{"a2"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client, state string
	}{{"ka1", store.ActionResolved}, {"ka2", store.ActionAbandoned}, {"ka3", store.ActionFailed}} {
		a, ok, err := s.ActionByClientID(ctx, "t1", "p1", c.client)
		if err != nil || !ok || a.State != c.state {
			t.Fatalf("action of %s: %+v %v %v, want %s", c.client, a, ok, err, c.state)
		}
	}
	if _, ok, _ := s.ActionByClientID(ctx, "t1", "p1", "unknown"); ok {
		t.Fatal("an unknown client id was found")
	}
	td := load(t, s, "t1")
	if len(td.Pending) != 1 || td.Pending[0].ID != "a3" {
		t.Fatalf("pending %+v, want a3", td.Pending)
	}
	if len(td.RecentActs) != 2 {
		t.Fatalf("recent acts %+v, want two", td.RecentActs)
	}
	states, err := s.ActionStates(ctx, "t1")
	if err != nil || states["a3"].Attempts != 2 {
		t.Fatalf("action states %+v %v", states, err)
	}
}

func message(role, text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"role": role, "content": text})
	return b
}

func testArchives(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	for turn := 1; turn <= 6; turn++ {
		msgs := []store.AgentMessage{
			{Agent: engine.AgentNarrative, Turn: turn, Body: message("user", fmt.Sprintf("turn %d", turn))},
			{Agent: engine.AgentNarrative, Turn: turn, Body: message("assistant", fmt.Sprintf("reply %d", turn))},
		}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", Messages: msgs}); err != nil {
			t.Fatal(err)
		}
	}
	m := &store.Memory{Agent: engine.AgentNarrative, LastTurn: 4, Title: "The mill", Summary: "Goblins at the mill.", Keywords: []string{"goblins"}, Source: "extractive"}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Archive: m}); err != nil {
		t.Fatal(err)
	}
	if m.ID == 0 || m.FirstTurn != 1 || m.LastTurn != 4 || m.Messages != 8 {
		t.Fatalf("archived %+v", m)
	}
	active, err := s.ActiveHistory(ctx, "t1", engine.AgentNarrative, 0)
	if err != nil || len(active) != 4 || active[0].Turn != 5 {
		t.Fatalf("active history %+v %v", active, err)
	}
	// The window never starts mid-turn: 3 asked, one whole turn given.
	if w, _ := s.ActiveHistory(ctx, "t1", engine.AgentNarrative, 3); len(w) != 2 || w[0].Turn != 6 {
		t.Fatalf("window of 3: %+v", w)
	}
	all, _ := s.AllHistory(ctx, "t1", engine.AgentNarrative)
	if len(all) != 12 {
		t.Fatalf("%d messages in all, want 12", len(all))
	}
	got, msgs, err := s.MemorySession(ctx, "t1", m.ID)
	if err != nil || got.Title != "The mill" || len(msgs) != 8 || msgs[7].Turn != 4 {
		t.Fatalf("session %+v %d %v", got, len(msgs), err)
	}
	// Nothing left to archive up to turn 4: ECONFLICT.
	again := &store.Memory{Agent: engine.AgentNarrative, LastTurn: 4, Title: "again"}
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "t1", Archive: again}), engine.ECONFLICT)
	// Nor anything at a table that does not exist: ENOTFOUND.
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Archive: &store.Memory{Agent: engine.AgentNarrative, LastTurn: 4}}), engine.ENOTFOUND)
	mems, _ := s.Memories(ctx, "t1", "", 0)
	if len(mems) != 1 {
		t.Fatalf("%d memories, want 1", len(mems))
	}
	_, _, err = s.MemorySession(ctx, "t1", m.ID+100)
	wantCode(t, err, engine.ENOTFOUND)
}

func testMemorySearch(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	createTable(t, s, "t2", fightingState(t))
	topics := []struct{ title, summary, keyword string }{
		{"The goblin ambush", "Snikket's band struck at the mill.", "goblins"},
		{"A quiet market", "Bread was bought and sold.", "market"},
		{"The drowned bell", "A bell rang under the river.", "river"},
	}
	for i, tp := range topics {
		turn := i + 1
		msgs := []store.AgentMessage{{Agent: engine.AgentNarrative, Turn: turn, Body: message("user", tp.title)}}
		m := &store.Memory{Agent: engine.AgentNarrative, LastTurn: turn, Title: tp.title, Summary: tp.summary, Keywords: []string{tp.keyword}, Source: "extractive"}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", Messages: msgs, Archive: m}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ query, want string }{
		{"goblins", "The goblin ambush"}, // stemmed
		{"gob", "The goblin ambush"},     // a prefix
		{"what about the RIVER?", "The drowned bell"},
		{"bread", "A quiet market"},
	} {
		got, err := s.SearchMemories(ctx, "t1", c.query, 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0].Title != c.want {
			t.Errorf("search %q: %+v, want %q first", c.query, got, c.want)
		}
	}
	if got, _ := s.SearchMemories(ctx, "t2", "goblins", 5); len(got) != 0 {
		t.Errorf("another table's memories found: %+v", got)
	}
	if got, _ := s.SearchMemories(ctx, "t1", `"*) OR 1=1 --`, 5); len(got) != 0 {
		t.Errorf("query syntax matched: %+v", got)
	}
	mems, _ := s.Memories(ctx, "t1", engine.AgentNarrative, 0)
	m := mems[1]
	m.Title, m.Summary, m.Keywords = "The floating loaves", "Bread rose into the sky.", []string{"miracle"}
	if err := s.UpdateMemory(ctx, m); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.SearchMemories(ctx, "t1", "miracle", 5); len(got) != 1 || got[0].ID != m.ID {
		t.Errorf("the updated memory is not found by its new keyword: %+v", got)
	}
	m.ID += 100
	wantCode(t, s.UpdateMemory(ctx, m), engine.ENOTFOUND)
}

func testAdminReads(t *testing.T, s Store) {
	createTable(t, s, "t1", fightingState(t))
	createTable(t, s, "t2", fightingState(t))
	paused, closed := true, at.Add(time.Hour)
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Paused: &paused}); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t2", ClosedAt: &closed}); err != nil {
		t.Fatal(err)
	}
	flags, err := s.TableFlags(ctx)
	if err != nil || !flags["t1"].Paused || !flags["t2"].Closed || !flags["t2"].ClosedAt.Equal(closed) {
		t.Fatalf("flags %+v %v", flags, err)
	}
	narr := engine.NarrationEvent(engine.AgentNarrative, "The mill creaks.", nil, "")
	narr.Seq, narr.TS, narr.Turn = 1, at.Add(time.Minute), "t3"
	calls := []store.LLMCall{
		{TableID: "t1", Agent: "narrative", Model: "m", Started: at, Latency: 1500 * time.Millisecond, PromptTokens: 10, CostUSD: 0.5, Turn: "t3"},
		{TableID: "t2", Agent: "combat", Model: "m", Started: at.Add(time.Second), Error: "boom", ErrorKind: store.CallServer},
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: []engine.Event{narr}, Calls: calls}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CallsSince(ctx, at, "", 0)
	if err != nil || len(got) != 2 || got[0].LatencyMS != 1500 || got[1].ErrorKind != store.CallServer {
		t.Fatalf("calls since %+v %v", got, err)
	}
	if got, _ := s.Calls(ctx, "t2", 10); len(got) != 1 || got[0].Error != "boom" {
		t.Fatalf("calls of t2 %+v", got)
	}
	times, err := s.TurnTimes(ctx, at)
	if err != nil || len(times) != 1 || !times[0].Equal(narr.TS) {
		t.Fatalf("turn times %v %v", times, err)
	}
	infos, err := s.TableInfos(ctx)
	if err != nil || len(infos) != 2 || infos[0].Mode != "combat" || !infos[0].Flags.Paused {
		t.Fatalf("table infos %+v %v", infos, err)
	}
	prog, err := s.TableProgress(ctx)
	if err != nil || prog["t1"].Turn != 7 || prog["t1"].Round == nil || !prog["t1"].LastTurnAt.Equal(narr.TS) {
		t.Fatalf("progress %+v %v", prog, err)
	}
	tables, err := s.Tables(ctx)
	if err != nil || len(tables) != 2 || tables[0].ID != "t1" {
		t.Fatalf("tables %+v %v", tables, err)
	}
}

func testPlayersAndConversations(t *testing.T, s Store) {
	p := engine.Player{ID: "p1", Name: "Ann", CreatedAt: at}
	if err := s.CreatePlayer(ctx, p, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreatePlayer(ctx, engine.Player{ID: "p2", Name: "Bo", CreatedAt: at}, []byte{1, 2, 3}), engine.ECONFLICT)
	got, err := s.PlayerByTokenHash(ctx, []byte{1, 2, 3})
	if err != nil || got.Name != "Ann" {
		t.Fatalf("player %+v %v", got, err)
	}
	_, err = s.PlayerByTokenHash(ctx, []byte{9})
	wantCode(t, err, engine.ENOTFOUND)
	_, err = s.Conversation(ctx, "c1")
	wantCode(t, err, engine.ENOTFOUND)
	msgs := []store.AgentMessage{{Turn: 1, Body: message("user", "how many tables?")}, {Turn: 1, Body: message("assistant", "two")}}
	if err := s.AppendConversation(ctx, "c1", msgs); err != nil {
		t.Fatal(err)
	}
	conv, err := s.Conversation(ctx, "c1")
	if err != nil || len(conv) != 2 || !strings.Contains(string(conv[1].Body), "two") {
		t.Fatalf("conversation %+v %v", conv, err)
	}
}
