package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/store"
	"tavern/web"
)

// newLongTableEnv serves a table whose log holds n events: a Tavern
// creates the table and stops, n-1 chat lines are committed to its SQLite
// file, and a fresh Tavern loads it (as after a restart).
func newLongTableEnv(t *testing.T, n int) (*testEnv, string) {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "t.db")
	first := startEnv(t, envConfig{path: path, quotas: web.Quotas{Off: true}})
	ts, err := first.hub.CreateTable(ctx, engine.Player{ID: "p-o", Name: "Owner"}, hub.TableSpec{Name: "Long"})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.tavern.Close(); err != nil { // stopped: the file is free
		t.Fatal(err)
	}
	st, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for seq := int64(2); seq <= int64(n); seq++ {
		ev := engine.ChatEvent(engine.Player{ID: "p-o", Name: "Owner"}, fmt.Sprintf("line %d", seq))
		ev.Seq, ev.TS = seq, now
		if err := st.Commit(ctx, store.Commit{TableID: ts.ID, Events: []engine.Event{ev}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return startEnv(t, envConfig{path: path, quotas: web.Quotas{Off: true}}), ts.ID
}

// sseMsg is one Server-Sent Event.
type sseMsg struct {
	id, event, data string
}

// readSSE reads messages from body until stop says so.
func readSSE(t *testing.T, sc *bufio.Scanner, stop func(sseMsg) bool) []sseMsg {
	t.Helper()
	var out []sseMsg
	var m sseMsg
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if m.data != "" {
				out = append(out, m)
				if stop(m) {
					return out
				}
			}
			m = sseMsg{}
		case strings.HasPrefix(line, "id: "):
			m.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			m.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			m.data = strings.TrimPrefix(line, "data: ")
		}
	}
	t.Fatalf("stream ended after %d messages: %v", len(out), sc.Err())
	return nil
}

// SSE resumes as the websocket does: on a table of 650
// events (it answered 503 past 256) a position within the replay window
// is replayed in full and in order, one further behind (or none) gets a
// "snapshot" event first; either way live events follow.
func TestStreamResumePolicy(t *testing.T) {
	const n = 650
	e, id := newLongTableEnv(t, n)
	open := func(lastEventID string) (*bufio.Scanner, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/tables/"+id+"/stream", nil)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		res, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("stream: status %d", res.StatusCode)
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		return sc, func() { cancel(); res.Body.Close() }
	}
	_, tok := e.newPlayer("Ann")
	sit := func(name string) {
		r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": name}}, tok)
		if r.status != http.StatusCreated {
			t.Fatalf("sit: %d %s", r.status, r.body)
		}
	}

	t.Run("replay within the window", func(t *testing.T) {
		sc, done := open("200") // 450 behind: within the window of 500
		defer done()
		msgs := readSSE(t, sc, func(m sseMsg) bool { return m.id == strconv.Itoa(n) })
		if len(msgs) != n-200 {
			t.Fatalf("%d messages replayed, want %d", len(msgs), n-200)
		}
		for i, m := range msgs {
			if m.event != "" || m.id != strconv.Itoa(201+i) {
				t.Fatalf("message %d: id %s event %q, want id %d", i, m.id, m.event, 201+i)
			}
		}
	})
	for _, tc := range []struct{ name, last string }{{"too far behind", "10"}, {"no position", ""}} {
		t.Run(tc.name, func(t *testing.T) {
			sc, done := open(tc.last)
			defer done()
			first := readSSE(t, sc, func(sseMsg) bool { return true })[0]
			if first.event != "snapshot" || first.id != strconv.Itoa(n) {
				t.Fatalf("first message: event %q id %s, want a snapshot at %d", first.event, first.id, n)
			}
			var snap hub.Snapshot
			if err := json.Unmarshal([]byte(first.data), &snap); err != nil || snap.Seq != n || snap.Table.ID != id {
				t.Fatalf("snapshot %.200s: %v", first.data, err)
			}
		})
	}
	t.Run("live after the snapshot", func(t *testing.T) {
		sc, done := open("1")
		defer done()
		readSSE(t, sc, func(m sseMsg) bool { return m.event == "snapshot" })
		sit("Brunhild")
		live := readSSE(t, sc, func(sseMsg) bool { return true })[0]
		var ev engine.Event
		if err := json.Unmarshal([]byte(live.data), &ev); err != nil || ev.Seq != n+1 || ev.Kind != engine.EventPlayerJoined {
			t.Fatalf("live event %s: %v", live.data, err)
		}
	})
}
