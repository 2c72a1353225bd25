package db

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

func TestEvents(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	var evs []engine.Event
	for i := 1; i <= 10; i++ {
		evs = append(evs, engine.Event{Seq: int64(i), TS: t0.Add(time.Duration(i) * time.Millisecond), Kind: "narration",
			Turn: fmt.Sprintf("t%d", i/3), Data: engine.NarrationData{Agent: engine.AgentNarrative, Text: fmt.Sprint("line ", i), Hints: []string{fmt.Sprint(i)}}})
	}
	mustCreateTable(t, d, "t1", newState(t, ""), evs[:4]...)
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Events: evs[4:]}); err != nil {
		t.Fatal(err)
	}
	// Another table's events must not leak in.
	mustCreateTable(t, d, "t2", newState(t, ""), engine.Event{Seq: 11, TS: t0, Kind: "table"})

	for _, c := range []struct {
		name         string
		since        int64
		limit        int
		first, count int64
	}{
		{"from start", 0, 3, 1, 3},
		{"all", 0, 100, 1, 10},
		{"middle", 4, 2, 5, 2},
		{"tail shorter than limit", 8, 5, 9, 2},
		{"caught up", 10, 5, 0, 0},
		{"zero limit", 0, 0, 0, 0},
		{"negative limit", 0, -1, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := d.Events(ctx, "t1", c.since, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(got)) != c.count {
				t.Fatalf("got %d events, want %d", len(got), c.count)
			}
			for i, e := range got {
				want := evs[c.first-1+int64(i)]
				if e.Seq != want.Seq || !e.TS.Equal(want.TS) || e.Kind != want.Kind || e.Turn != want.Turn {
					t.Errorf("event %d = %+v, want %+v", i, e, want)
				}
				// Data comes back as the payload it was built with.
				if !reflect.DeepEqual(e.Data, want.Data) {
					t.Errorf("event %d data = %v, want %v", i, e.Data, want.Data)
				}
			}
		})
	}
	got, err := d.Events(ctx, "nope", 0, 10)
	if err != nil || len(got) != 0 {
		t.Errorf("events of unknown table = %v, %v", got, err)
	}
}

func TestHistoryNeverStartsMidTurn(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	mustCreateTable(t, d, "t2", newState(t, ""))
	// Narrative messages 0..5 in turns 1 1 2 2 2 3, interleaved with combat
	// messages (and another table's) that must not count.
	turns := []int{1, 1, 2, 2, 2, 3}
	for i, turn := range turns {
		c := store.Commit{TableID: "t1", Messages: []store.AgentMessage{
			{Agent: engine.AgentNarrative, Turn: turn, Body: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))},
			{Agent: engine.AgentCombat, Turn: turn, Body: json.RawMessage(`{"combat":true}`)},
		}}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		c.TableID = "t2"
		if err := d.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// A turn longer than any window below.
	for range 3 {
		if err := d.Commit(ctx, store.Commit{TableID: "t1", Messages: []store.AgentMessage{
			{Agent: "long", Turn: 9, Body: json.RawMessage(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		name  string
		agent string
		n     int
		want  []int // message indexes
	}{
		{"whole history", engine.AgentNarrative, 6, []int{0, 1, 2, 3, 4, 5}},
		{"more than there is", engine.AgentNarrative, 100, []int{0, 1, 2, 3, 4, 5}},
		{"cut at a turn start", engine.AgentNarrative, 4, []int{2, 3, 4, 5}},
		{"cut inside turn 1", engine.AgentNarrative, 5, []int{2, 3, 4, 5}},
		{"cut inside turn 2", engine.AgentNarrative, 3, []int{5}},
		{"cut inside turn 2 again", engine.AgentNarrative, 2, []int{5}},
		{"last turn only", engine.AgentNarrative, 1, []int{5}},
		{"zero", engine.AgentNarrative, 0, nil},
		{"one turn longer than n", "long", 2, nil},
		{"unknown agent", "nobody", 5, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := d.History(ctx, "t1", c.agent, c.n)
			if err != nil {
				t.Fatal(err)
			}
			var idx []int
			for _, m := range got {
				if m.Agent != c.agent {
					t.Errorf("message of agent %q", m.Agent)
				}
				var b struct{ I int }
				if err := json.Unmarshal(m.Body, &b); err != nil {
					t.Fatal(err)
				}
				if m.Turn != turns[b.I] {
					t.Errorf("message %d: turn %d, want %d", b.I, m.Turn, turns[b.I])
				}
				idx = append(idx, b.I)
			}
			if !slices.Equal(idx, c.want) {
				t.Errorf("History(%s, %d) = messages %v, want %v", c.agent, c.n, idx, c.want)
			}
		})
	}
}

// TestEventNotJSON: an event whose data has no JSON fails its commit when
// it is queued (Enqueue encodes the data on the caller's goroutine, and
// never calls done then); nothing of the commit is written. The writer
// encodes a commit that did not come through Enqueue itself.
func TestEventNotJSON(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", newState(t, ""))
	bad := store.Commit{TableID: "t1", Events: []engine.Event{
		{Seq: 1, TS: t0, Kind: "narration", Data: engine.NarrationData{Text: "fine"}},
		{Seq: 2, TS: t0, Kind: "dice", Data: engine.RawData("{not JSON")},
	}}
	err := d.Enqueue(ctx, bad, func(error) { t.Error("done called for a commit not queued") })
	if err == nil || !strings.Contains(err.Error(), "encode event 2 (dice)") {
		t.Fatalf("Enqueue: err = %v, want an encoding error of event 2", err)
	}
	if err := d.Commit(ctx, bad); err == nil {
		t.Fatal("Commit of an event without JSON succeeded")
	}
	batch, results := requests(bad, store.Commit{TableID: "t1", Events: []engine.Event{{Seq: 3, TS: t0, Kind: "chat", Data: engine.ChatData{Text: "hi"}}}})
	d.committer.apply(batch)
	if err := <-results[0]; err == nil || !strings.Contains(err.Error(), "encode event 2") {
		t.Errorf("writer: err = %v, want an encoding error of event 2", err)
	}
	if err := <-results[1]; err != nil {
		t.Errorf("the commit queued with it: %v", err)
	}
	evs, err := d.Events(ctx, "t1", 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Seq != 3 {
		t.Errorf("events %+v, want only seq 3", evs)
	}
}

// TestEventDataHandedIn: a commit that carries its events' data as JSON
// (store.Commit.EventData, as the hub does) stores those bytes; one whose
// data does not match its events is refused whole.
func TestEventDataHandedIn(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	mustCreateTable(t, d, "t1", fightingState(t))
	evs := []engine.Event{{Seq: 1, TS: t0, Kind: "chat", Data: engine.ChatData{Text: "ignored"}}}
	c := store.Commit{TableID: "t1", Events: evs, EventData: []json.RawMessage{json.RawMessage(`{"text":"as handed"}`)}}
	if err := d.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := d.Events(ctx, "t1", 0, 10)
	if err != nil || len(got) != 1 || got[0].Data != (engine.ChatData{Text: "as handed"}) {
		t.Fatalf("events %v (%v), want the data handed in", got, err)
	}
	c.Events = []engine.Event{{Seq: 2, TS: t0, Kind: "chat"}, {Seq: 3, TS: t0, Kind: "chat"}}
	if err := d.Commit(ctx, c); err == nil {
		t.Error("a commit with the data of 1 event for 2 was stored")
	}
	if got, _ := d.Events(ctx, "t1", 1, 10); len(got) != 0 {
		t.Errorf("%d events stored from the refused commit", len(got))
	}
}

// raw is an event's data given as JSON fields, as an old event or one of
// a kind the engine does not know holds them.
func raw(fields map[string]any) engine.Payload {
	b, err := json.Marshal(fields)
	if err != nil {
		panic(err)
	}
	return engine.RawData(b)
}
