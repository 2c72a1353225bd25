package db

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestCommitTurnThenReload(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	if err := d.CreatePlayer(ctx, engine.Player{ID: "p1", Name: "Ann", CreatedAt: t0}, []byte("h1")); err != nil {
		t.Fatal(err)
	}
	st := newState(t, "")
	mustCreateTable(t, d, "t1", st, engine.Event{Seq: 1, TS: t0, Kind: "table"})
	// Another table from the same adventure: its rows must survive t1's
	// commits, which delete t1's stale rows.
	other := newState(t, "")
	mustCreateTable(t, d, "t2", other)

	// Turn 1: a seat taken, a pending action.
	seat := engine.Seat{Seat: "1", PlayerID: "p1", CharacterID: "c1", JoinedAt: t0}
	pending := engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "k1", Text: "I attack", Status: engine.ActionPending, CreatedAt: t0}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", AddSeat: &seat, AddPending: &pending,
		Events: []engine.Event{{Seq: 2, TS: t0, Kind: "join"}}}); err != nil {
		t.Fatal(err)
	}
	td := mustLoad(t, d, "t1")
	seat.PlayerName = "Ann"
	if len(td.Seats) != 1 || td.Seats[0] != seat {
		t.Errorf("seats = %+v, want [%+v]", td.Seats, seat)
	}
	if len(td.Pending) != 1 || td.Pending[0] != pending {
		t.Errorf("pending = %+v, want [%+v]", td.Pending, pending)
	}

	// Turn 2: the whole state changes (party, fight, world rows removed and
	// added), with events and messages, and the action is resolved.
	st = fightingState(t)
	delete(st.World.Items, "rope-1")
	delete(st.World.NPCs, "maren")
	delete(st.World.Relationships, engine.RelKey("c2", "snikket"))
	st.World.Quests["extra"] = &engine.Quest{ID: "extra", Name: "Extra", Giver: "tobin", Status: engine.QuestActive, RewardXP: 5}
	st.World.Locations["mill"].Exits = append(st.World.Locations["mill"].Exits, engine.Exit{To: "road", Name: "a ford"})
	st.Config.TurnTimeoutS = 30
	msgs := []store.AgentMessage{
		{Agent: engine.AgentCombat, Turn: 2, Body: json.RawMessage(`{"role":"user","content":"I attack"}`)},
		{Agent: engine.AgentCombat, Turn: 2, Body: json.RawMessage(`{"role":"assistant","content":"Steel rings."}`)},
	}
	evs := []engine.Event{
		{Seq: 3, TS: t0.Add(time.Second), Kind: "action", Turn: "t2", Data: raw(map[string]any{"text": "I attack"})},
		{Seq: 4, TS: t0.Add(2 * time.Second), Kind: "mode", Turn: "t2", Data: raw(map[string]any{"mode": "combat"})},
	}
	resolvedAt := t0.Add(time.Minute)
	d.now = func() time.Time { return resolvedAt }
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st, Events: evs, Messages: msgs, Resolve: []string{"a1", "unknown"}}); err != nil {
		t.Fatal(err)
	}
	td = mustLoad(t, d, "t1")
	assertSameState(t, td.State, st)
	if td.Table.Config.TurnTimeoutS != 30 {
		t.Errorf("table config = %+v, want the state's", td.Table.Config)
	}
	if td.Seq != 4 {
		t.Errorf("seq = %d, want 4", td.Seq)
	}
	if len(td.Pending) != 0 {
		t.Errorf("pending after resolve = %+v", td.Pending)
	}
	var status, at string
	if err := d.reader.QueryRow("SELECT status, resolved_at FROM pending_actions WHERE id = 'a1'").Scan(&status, &at); err != nil {
		t.Fatal(err)
	}
	if status != engine.ActionResolved || at != formatTime(resolvedAt) {
		t.Errorf("resolved action: status %q at %q", status, at)
	}
	hist, err := d.History(ctx, "t1", engine.AgentCombat, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || string(hist[1].Body) != string(msgs[1].Body) || hist[1].Agent != engine.AgentCombat || hist[1].Turn != 2 {
		t.Errorf("history = %+v", hist)
	}
	for _, c := range []struct {
		table string
		want  int
	}{
		{"items", len(st.World.Items)},
		{"npcs", len(st.World.NPCs)},
		{"relationships", len(st.World.Relationships)},
		{"quests", len(st.World.Quests)},
		{"characters", len(st.Party)},
	} {
		if n := count(t, d.reader, "SELECT COUNT(*) FROM "+c.table+" WHERE table_id = 't1'"); n != c.want {
			t.Errorf("%s rows = %d, want %d", c.table, n, c.want)
		}
	}
	assertSameState(t, mustLoad(t, d, "t2").State, other)

	// Turn 3: the seat is left; the party shrinks.
	st.RemoveCharacter("1")
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st, RemoveSeat: "1"}); err != nil {
		t.Fatal(err)
	}
	td = mustLoad(t, d, "t1")
	assertSameState(t, td.State, st)
	if len(td.Seats) != 0 {
		t.Errorf("seats after leaving = %+v", td.Seats)
	}
}

func TestCommitSeats(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	var seq int64
	take := func(seat, player string) error {
		seq++
		return d.Commit(ctx, store.Commit{TableID: "t1", AddSeat: &engine.Seat{Seat: seat, PlayerID: player, CharacterID: "c" + seat, JoinedAt: t0},
			Events: []engine.Event{{Seq: seq, TS: t0, Kind: "join"}}})
	}
	for _, s := range []string{"10", "2", "1"} {
		if err := take(s, "p"+s); err != nil {
			t.Fatal(err)
		}
	}
	wantCode(t, take("2", "p9"), engine.ECONFLICT)  // seat taken
	wantCode(t, take("3", "p10"), engine.ECONFLICT) // player already seated
	td := mustLoad(t, d, "t1")
	var seats []string
	for _, s := range td.Seats {
		seats = append(seats, s.Seat)
		if s.PlayerName != "" {
			t.Errorf("seat %s: name %q for a player not stored", s.Seat, s.PlayerName)
		}
	}
	if want := []string{"1", "2", "10"}; !slices.Equal(seats, want) {
		t.Errorf("seats = %v, want %v", seats, want)
	}
	if n := count(t, d.reader, "SELECT COUNT(*) FROM events"); n != 3 {
		t.Errorf("%d events: a refused seat wrote its event", n)
	}
}

func TestCommitDuplicatePendingWritesNothing(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st, engine.Event{Seq: 1, TS: t0, Kind: "table"})
	first := engine.PendingAction{ID: "a1", PlayerID: "p1", ClientID: "k1", Text: "first", CreatedAt: t0}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", AddPending: &first}); err != nil {
		t.Fatal(err)
	}
	before := mustLoad(t, d, "t1")

	for _, c := range []struct {
		name string
		p    engine.PendingAction
	}{
		{"same client id", engine.PendingAction{ID: "a2", PlayerID: "p1", ClientID: "k1", Text: "again"}},
		{"same action id", engine.PendingAction{ID: "a1", PlayerID: "p2", ClientID: "k9", Text: "again"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			changed := st.Clone()
			changed.Game.Turn++
			changed.Party[0].HP = 1
			delete(changed.World.Items, "rope-1")
			err := d.Commit(ctx, store.Commit{
				TableID:    "t1",
				State:      changed,
				AddPending: &c.p,
				Events:     []engine.Event{{Seq: 2, TS: t0, Kind: "action"}},
				Messages:   []store.AgentMessage{{Agent: engine.AgentNarrative, Turn: 1, Body: json.RawMessage(`{}`)}},
				AddSeat:    &engine.Seat{Seat: "5", PlayerID: "p5", JoinedAt: t0},
				Resolve:    []string{"a1"},
			})
			wantCode(t, err, engine.ECONFLICT)
			after := mustLoad(t, d, "t1")
			assertSameState(t, after.State, before.State)
			if after.Seq != before.Seq || len(after.Seats) != 0 || len(after.Pending) != 1 || after.Pending[0].Text != "first" {
				t.Errorf("refused commit wrote: seq %d, seats %v, pending %+v", after.Seq, after.Seats, after.Pending)
			}
			if n := count(t, d.reader, "SELECT COUNT(*) FROM agent_messages"); n != 0 {
				t.Errorf("refused commit wrote %d messages", n)
			}
		})
	}
}

func TestCommitPendingOrder(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	// Stored first but created later, at a time with a fraction of a second:
	// trimmed RFC3339Nano text would sort it before "…00Z".
	for _, p := range []engine.PendingAction{
		{ID: "late", PlayerID: "p1", ClientID: "k1", CreatedAt: t0.Add(500 * time.Millisecond)},
		{ID: "early", PlayerID: "p2", ClientID: "k1", CreatedAt: t0},
		{ID: "last", PlayerID: "p1", ClientID: "k2", CreatedAt: t0.Add(time.Second)},
	} {
		if err := d.Commit(ctx, store.Commit{TableID: "t1", AddPending: &p}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for _, p := range mustLoad(t, d, "t1").Pending {
		ids = append(ids, p.ID)
		if p.Status != engine.ActionPending {
			t.Errorf("%s: status %q", p.ID, p.Status)
		}
	}
	if want := []string{"early", "late", "last"}; !slices.Equal(ids, want) {
		t.Errorf("pending = %v, want %v", ids, want)
	}
}

func TestCommitErrors(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := newState(t, "")
	mustCreateTable(t, d, "t1", st, engine.Event{Seq: 1, TS: t0, Kind: "table"})
	changed := st.Clone()
	changed.Game.Turn = 99
	bad := changed.Clone()
	bad.World.Relationships["nobar"] = 3

	for _, c := range []struct {
		name string
		c    store.Commit
		code string
	}{
		{"unknown table with state", store.Commit{TableID: "nope", State: st.Clone()}, engine.ENOTFOUND},
		{"unknown table with events", store.Commit{TableID: "nope", Events: []engine.Event{{Seq: 1, Kind: "x"}}}, engine.ENOTFOUND},
		{"unknown table with pending", store.Commit{TableID: "nope", AddPending: &engine.PendingAction{ID: "a", PlayerID: "p", ClientID: "k"}}, engine.ENOTFOUND},
		{"relationship key without bar", store.Commit{TableID: "t1", State: bad}, engine.EINVALID},
		{"message not JSON", store.Commit{TableID: "t1", Messages: []store.AgentMessage{{Agent: "narrative", Body: json.RawMessage(`{`)}}}, engine.EINVALID},
		{"event seq taken", store.Commit{TableID: "t1", State: changed, Events: []engine.Event{{Seq: 1, Kind: "again"}}}, engine.EINTERNAL},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantCode(t, d.Commit(ctx, c.c), c.code)
		})
	}
	td := mustLoad(t, d, "t1")
	assertSameState(t, td.State, st)
	if td.Seq != 1 {
		t.Errorf("seq = %d after failed commits", td.Seq)
	}
}
