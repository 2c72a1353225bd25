package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// ErasureStore is an OperatorStore with the owner's save points, and
// EventData: the stored JSON of a table's events, in seq order, as the
// bytes the store holds (a test reads them below the store's API, which
// decodes them).
type ErasureStore interface {
	OperatorStore
	OwnerData(ctx context.Context, tableID string) (store.OwnerData, error)
	EventData(ctx context.Context, tableID string) ([]string, error)
}

// RunErasure runs the contract of a player's erasure; open returns a
// new, empty store for one test (the suite closes it).
func RunErasure(t *testing.T, open func(t *testing.T) ErasureStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s ErasureStore)
	}{
		{"TablesSatAtAndLeft", testErasureTables},
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

// An erasure rewrites the player's events at every table they sat at,
// those they left too, keeping every other byte (the same bytes on
// either engine: the hub's frames carried them); it deletes the save
// points of those tables, each of which holds a state with their
// backstory; and it leaves the tables they never sat at alone.
func testErasureTables(t *testing.T, s ErasureStore) {
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
