package db

import (
	"context"
	"slices"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestCreateLoadRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		state func(testing.TB) *engine.State
	}{
		{"fresh d100", func(tb testing.TB) *engine.State { return newState(tb, "") }},
		{"fresh d20", func(tb testing.TB) *engine.State { return newState(tb, engine.RulesetD20) }},
		{"party in combat", fightingState},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := MustOpenDB(t)
			st := c.state(t)
			want := st.Clone()
			evs := []engine.Event{
				{Seq: 1, TS: t0, Kind: "table", Data: raw(map[string]any{"name": "x"})},
				{Seq: 2, TS: t0.Add(time.Nanosecond), Kind: "narration", Turn: "t0", Data: raw(map[string]any{"text": "Rain."})},
			}
			tbl := mustCreateTable(t, d, "t1", st, evs...)

			td := mustLoad(t, d, "t1")
			assertSameState(t, td.State, want)
			if td.Table != tbl {
				t.Errorf("table = %+v, want %+v", td.Table, tbl)
			}
			if td.Seq != 2 {
				t.Errorf("seq = %d, want 2", td.Seq)
			}
			if len(td.Seats) != 0 || len(td.Pending) != 0 {
				t.Errorf("seats %v, pending %v: want none", td.Seats, td.Pending)
			}
			if td.State.Catalogue != nil {
				t.Errorf("catalogue set")
			}
			// The loaded state must carry on the same dice sequence.
			a, err := engine.RestoreDice(st.RNG)
			if err != nil {
				t.Fatal(err)
			}
			b, err := engine.RestoreDice(td.State.RNG)
			if err != nil {
				t.Fatal(err)
			}
			if x, y := a.Uint64(), b.Uint64(); x != y {
				t.Errorf("dice diverge after reload: %d != %d", x, y)
			}
		})
	}
}

func TestPartyOrderedBySeatNumber(t *testing.T) {
	d := MustOpenDB(t)
	mustCreateTable(t, d, "t1", fightingState(t))
	var seats []string
	for _, c := range mustLoad(t, d, "t1").State.Party {
		seats = append(seats, c.Seat)
	}
	if got, want := seats, []string{"1", "2", "10"}; !slices.Equal(got, want) {
		t.Errorf("party seats = %v, want %v", got, want)
	}
}

func TestCreateTableConflict(t *testing.T) {
	d := MustOpenDB(t)
	mustCreateTable(t, d, "t1", newState(t, ""))
	other := newState(t, engine.RulesetD20)
	err := d.CreateTable(context.Background(), engine.Table{ID: "t1", Name: "again", CreatedAt: t0}, other, nil)
	wantCode(t, err, engine.ECONFLICT)
	if got := mustLoad(t, d, "t1"); got.Table.Name != "Table t1" || got.State.Config.Ruleset == engine.RulesetD20 {
		t.Errorf("conflicting create overwrote the table: %+v", got.Table)
	}
	wantCode(t, d.CreateTable(context.Background(), engine.Table{ID: "t2"}, nil, nil), engine.EINVALID)
}

func TestLoadTableNotFound(t *testing.T) {
	d := MustOpenDB(t)
	_, err := d.LoadTable(context.Background(), "nope")
	wantCode(t, err, engine.ENOTFOUND)
}

func TestTablesOldestFirst(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	// Created out of order, with creation times whose texts would sort
	// wrongly if stored as trimmed RFC3339Nano ("…00Z" after "…00.5Z").
	for _, c := range []struct {
		id string
		at time.Time
	}{
		{"late", t0.Add(time.Second)},
		{"middle", t0.Add(500 * time.Millisecond)},
		{"early", t0},
	} {
		tb := engine.Table{ID: c.id, Name: c.id, Adventure: "greyhollow", Seats: 4, CreatedAt: c.at}
		if err := d.CreateTable(ctx, tb, newState(t, ""), nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tb := range got {
		ids = append(ids, tb.ID)
	}
	if want := []string{"early", "middle", "late"}; !slices.Equal(ids, want) {
		t.Errorf("tables = %v, want %v", ids, want)
	}
	// The stored config is the state's, with the engine's defaults.
	if got[0].Config.Ruleset != engine.RulesetD100 || got[0].Config.CombatMode != engine.CombatTactical || got[0].Config.TurnTimeoutS != 90 {
		t.Errorf("config = %+v", got[0].Config)
	}
	if !got[1].CreatedAt.Equal(t0.Add(500 * time.Millisecond)) {
		t.Errorf("created_at = %v", got[1].CreatedAt)
	}
}

// TestTableInfos: the lobby's view of every table without loading any —
// the mode from the stored game, the seats taken, whether an action is
// open (not once it is resolved), and the operator's marks — as LoadTable
// would tell.
func TestTableInfos(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "calm", newState(t, ""))
	mustCreateTable(t, d, "fight", fightingState(t))
	seat := engine.Seat{Seat: "1", PlayerID: "p1", CharacterID: "c1", JoinedAt: t0}
	a := &engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "x", Text: "I wait",
		Status: engine.ActionPending, CreatedAt: t0}
	if err := d.Commit(ctx, store.Commit{TableID: "calm", AddSeat: &seat, AddPending: a}); err != nil {
		t.Fatal(err)
	}
	if err := d.CloseTable(ctx, "fight", t0); err != nil {
		t.Fatal(err)
	}
	infos := func() map[string]store.TableInfo {
		got, err := d.TableInfos(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]store.TableInfo{}
		for _, i := range got {
			out[i.Table.ID] = i
		}
		return out
	}
	got := infos()
	calm, fight := got["calm"], got["fight"]
	if len(got) != 2 || calm.Mode != engine.ModeNarrative || calm.Seated != 1 || !calm.Pending || calm.Flags.Closed ||
		calm.Table.Name != "Table calm" || calm.Table.Seats != 4 {
		t.Errorf("calm: %+v", calm)
	}
	if fight.Mode != engine.ModeCombat || fight.Pending || !fight.Flags.Closed || fight.Seated != len(mustLoad(t, d, "fight").Seats) {
		t.Errorf("fight: %+v", fight)
	}
	if td := mustLoad(t, d, "fight"); !td.Flags.Closed {
		t.Errorf("LoadTable flags %+v", td.Flags)
	}
	if err := d.Commit(ctx, store.Commit{TableID: "calm", Resolve: []string{"a1"}}); err != nil {
		t.Fatal(err)
	}
	if infos()["calm"].Pending {
		t.Errorf("a resolved action still counts as open")
	}
}
