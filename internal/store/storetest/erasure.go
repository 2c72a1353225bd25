package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// PlayerDataStore is an OperatorStore with the owner's save points, the
// players' scores, the call log, and EventData: the stored JSON of a table's events, in seq order, as the
// bytes the store holds (a test reads them below the store's API, which
// decodes them).
type PlayerDataStore interface {
	OperatorStore
	OwnerData(ctx context.Context, tableID string) (store.OwnerData, error)
	SetFeedback(ctx context.Context, f store.Feedback) error
	LogCall(ctx context.Context, c store.LLMCall) error
	EventData(ctx context.Context, tableID string) ([]string, error)
}

// RunPlayerData runs the contract of what the operator reads and erases
// of a player; open returns a new, empty store for one test (the suite
// closes it).
func RunPlayerData(t *testing.T, open func(t *testing.T) PlayerDataStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s PlayerDataStore)
	}{
		{"PlayerPage", testPlayerPage},
		{"ErasureTablesSatAtAndLeft", testErasureTables},
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

// The player's page: the tables they own or sit at, the spend of the
// turns that played their actions (not of other players' turns, nor of a
// turn of the same name at another table), and their scores.
func testPlayerPage(t *testing.T, s PlayerDataStore) {
	for _, p := range []engine.Player{{ID: "p1", Name: "Quill", CreatedAt: at}, {ID: "p2", Name: "Bo", CreatedAt: at}} {
		if err := s.CreatePlayer(ctx, p, []byte(p.ID)); err != nil {
			t.Fatal(err)
		}
	}
	st := fightingState(t)
	for i, tb := range []engine.Table{
		{ID: "t1", Name: "Mine", OwnerID: "p1"},
		{ID: "t2", Name: "Theirs", OwnerID: "p2"},
		{ID: "t3", Name: "Not mine", OwnerID: "p2"},
	} {
		tb.Adventure, tb.Config, tb.Seats, tb.CreatedAt = "greyhollow", st.Config, 4, at.Add(time.Duration(i)*time.Minute)
		if err := s.CreateTable(ctx, tb, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	seat := &engine.Seat{Seat: "1", PlayerID: "p1", CharacterID: "c1", JoinedAt: at}
	if err := s.Commit(ctx, store.Commit{TableID: "t2", AddSeat: seat}); err != nil {
		t.Fatal(err)
	}
	seq := int64(0)
	for _, a := range []struct{ table, action, player, turn string }{
		{"t2", "a1", "p1", "t1"}, {"t2", "a2", "p2", "t2"}, {"t3", "a1", "p2", "t1"},
	} {
		act := &engine.PendingAction{ID: a.action, PlayerID: a.player, CharacterID: "c1", Seat: "1", ClientID: a.action, Text: "look", CreatedAt: at}
		seq++
		ev := engine.NarrationEvent(engine.AgentNarrative, "You look.", nil, a.action)
		ev.Seq, ev.TS, ev.Turn = seq, at, a.turn
		if err := s.Commit(ctx, store.Commit{TableID: a.table, AddPending: act}); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, store.Commit{TableID: a.table, Events: []engine.Event{ev}, Resolve: []string{a.action}}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			c := store.LLMCall{TableID: a.table, Agent: engine.AgentNarrative, Model: "m", Started: at, CostUSD: 0.25, Turn: a.turn}
			if err := s.LogCall(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if a.player == "p1" {
			f := store.Feedback{TableID: a.table, Seq: seq, PlayerID: "p1", Score: 1, Comment: "nice", At: at, Turn: a.turn, Agent: engine.AgentNarrative}
			if err := s.SetFeedback(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := s.PlayerDetail(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	want := []store.PlayerSeat{
		{TableID: "t2", TableName: "Theirs", Seat: "1", Character: "Aldric", Class: "warrior", Level: 1},
		{TableID: "t1", TableName: "Mine", Owner: true},
	}
	if !slices.Equal(d.Seats, want) || d.Tables != 2 {
		t.Errorf("seats %+v (tables %d), want %+v", d.Seats, d.Tables, want)
	}
	if d.Spend.Calls != 2 || d.Spend.USD != 0.5 {
		t.Errorf("spend %+v, want the two calls of turn t1 at t2", d.Spend)
	}
	if len(d.Feedback) != 1 || d.Feedback[0] != (store.PlayerFeedback{TableID: "t2", Seq: 1, Score: 1, Comment: "nice"}) {
		t.Errorf("feedback %+v", d.Feedback)
	}
}

// An erasure rewrites the player's events at every table they sat at,
// those they left too, keeping every other byte (the same bytes on
// either engine: the hub's frames carried them); it deletes the save
// points of those tables, each of which holds a state with their
// backstory; and it leaves the tables they never sat at alone.
func testErasureTables(t *testing.T, s PlayerDataStore) {
	const backstory = "my sister Elira keeps the lighthouse"
	for _, p := range []engine.Player{{ID: "p1", Name: "Quill <the> & Co", CreatedAt: at}, {ID: "p2", Name: "Bo", CreatedAt: at}} {
		if err := s.CreatePlayer(ctx, p, []byte(p.ID)); err != nil {
			t.Fatal(err)
		}
	}
	st := fightingState(t)
	st.Party[0].Backstory = backstory // c1, player p1
	left := st.Clone()                // p1 sat at t2 and left: their character went with them
	left.Party = left.Party[1:]
	createTable(t, s, "t1", st)
	createTable(t, s, "t2", left)
	createTable(t, s, "t3", left) // p1 owns it but never sat there
	before, _ := json.Marshal(st)
	for _, id := range []string{"t1", "t2", "t3"} {
		if id != "t3" {
			start := &engine.PendingAction{ID: "a0", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "start:c1", Text: backstory, CreatedAt: at, Kind: engine.ActionStart}
			if err := s.Commit(ctx, store.Commit{TableID: id, AddPending: start}); err != nil {
				t.Fatal(err)
			}
		}
		act := engine.PendingAction{ID: "a1", PlayerID: "p2", CharacterID: "c2", Seat: "2", ClientID: "x1", Text: "look", CreatedAt: at}
		save := &store.OwnerChange{Save: &store.SavePoint{Turn: 1, Action: act, FromSeq: 1, State: before}}
		if err := s.Commit(ctx, store.Commit{TableID: id, AddPending: &act, Owner: save}); err != nil {
			t.Fatal(err)
		}
	}
	// The events' data as the hub encoded them (store.Commit.EventData):
	// escaped characters, and a member order that is not alphabetical.
	data := []string{
		`{"character":"Aldric","character_id":"c1","name":"Quill \u003cthe\u003e \u0026 Co","player_id":"p1","role":"player","seat":"1"}`,
		`{"action_id":"a2","character_id":"c1","name":"Aldric","player_id":"p1","text":"open the \u003cdoor\u003e"}`,
		`{"name":"Quill \u003cthe\u003e \u0026 Co","player_id":"p1","text":"zebra \u003c xylophone"}`,
		`{"name":"Bo","player_id":"p2","text":"hi Quill"}`,
		`{"by":"owner","name":"Quill \u003cthe\u003e \u0026 Co","player_id":"p1","role":"player","seat":"1"}`,
	}
	kinds := []engine.Kind{engine.EventPlayerJoined, engine.EventAction, engine.EventChat, engine.EventChat, engine.EventPlayerLeft}
	for _, id := range []string{"t1", "t2", "t3"} {
		c := store.Commit{TableID: id}
		for i, d := range data {
			if id == "t3" && strings.Contains(d, `"p1"`) {
				continue
			}
			ev := engine.Event{Seq: int64(len(c.Events) + 1), TS: at, Kind: kinds[i], Data: engine.RawData(d)}
			c.Events, c.EventData = append(c.Events, ev), append(c.EventData, json.RawMessage(d))
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	if err := s.ErasePlayer(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	erased := []string{
		`{"character":"Aldric","character_id":"c1","name":"deleted player","player_id":"p1","role":"player","seat":"1"}`,
		`{"action_id":"a2","character_id":"c1","name":"deleted player","player_id":"p1","text":"open the \u003cdoor\u003e"}`,
		`{"name":"deleted player","player_id":"p1","text":""}`,
		data[3],
		`{"by":"owner","name":"deleted player","player_id":"p1","role":"player","seat":"1"}`,
	}
	for _, id := range []string{"t1", "t2"} {
		got, err := s.EventData(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, erased) {
			t.Errorf("events of %s after the erasure:\n got %s\nwant %s", id, strings.Join(got, "\n    "), strings.Join(erased, "\n     "))
		}
	}
	if got, _ := s.EventData(ctx, "t3"); !slices.Equal(got, []string{data[3]}) {
		t.Errorf("events of t3, where p1 never sat: %q", got)
	}
	for id, want := range map[string]int{"t1": 0, "t2": 0, "t3": 1} {
		od, err := s.OwnerData(ctx, id)
		if err != nil || len(od.Points) != want {
			t.Errorf("save points of %s after the erasure: %d (%v), want %d", id, len(od.Points), err, want)
		}
	}
	x, err := s.ExportPlayer(ctx, "p1")
	if err != nil || len(x.Actions) != 2 || x.Actions[0].Text != "" || x.Actions[1].Text != "" {
		t.Errorf("the start actions after the erasure %+v %v", x.Actions, err)
	}
}
