package tavern

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tavern/internal/hub"
)

// TestPlayersBanAndErase: the operator finds a player, sees their page,
// bans them (their sockets close 4003 with the reason, their token makes
// and sits nowhere), lifts the ban, exports their data, and erases them:
// afterwards no text column of any table in the file holds their name,
// their chat text or their backstory, the events keep their number, and
// the story export names them "deleted player".
func TestPlayersBanAndErase(t *testing.T) {
	cfg := testConfig(t)
	s := startOp(t, cfg)
	const name, chat, backstory = "Quillithorn", "zebra xylophone chat", "my sister Elira keeps the lighthouse"
	pid, tok := s.player(name)
	_, other := s.player("Bob")
	id := s.table(tok, "Lanterns", "Bram", backstory)
	s.sit(other, id, "Cora", "")
	ws := s.dial(id, tok, "player")
	ws.send(map[string]any{"type": "say", "id": "c1", "text": chat})
	ws.await("the chat ack", func(f map[string]any) bool { return f["type"] == "ack" && f["id"] == "c1" })
	ws.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	ws.await("the ack", func(f map[string]any) bool { return f["type"] == "ack" && f["id"] == "a1" })
	s.settle(id) // the arrival and a1 played: the log grows no more

	var found struct {
		Players []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Tables int    `json:"tables"`
			Banned bool   `json:"banned"`
		} `json:"players"`
	}
	if st := s.call("GET", "/api/admin/players?q=quill", "admin", nil, &found); st != http.StatusOK || len(found.Players) != 1 ||
		found.Players[0].ID != pid || found.Players[0].Tables != 1 {
		t.Fatalf("search: %d %+v", st, found)
	}
	var detail struct {
		Name  string `json:"name"`
		Seats []struct {
			TableID   string `json:"table_id"`
			Owner     bool   `json:"owner"`
			Character string `json:"character"`
		} `json:"seats"`
		Actions int `json:"actions"`
	}
	if st := s.call("GET", "/api/admin/players/"+pid, "admin", nil, &detail); st != http.StatusOK || len(detail.Seats) != 1 ||
		!detail.Seats[0].Owner || detail.Seats[0].Character != "Bram" || detail.Actions < 2 {
		t.Fatalf("player page: %d %+v", st, detail)
	}
	if body := s.page("/admin/players/" + pid); !strings.Contains(body, name) || !strings.Contains(body, "look around") {
		t.Error("the player's page lacks their name or their action")
	}

	// Ban: the sockets close 4003 with the reason; the token is refused.
	spec := s.dial(id, tok, "spectator")
	if st := s.call("POST", "/api/admin/players/"+pid+"/ban", "admin", map[string]string{"reason": "spam"}, nil); st != http.StatusNoContent {
		t.Fatalf("ban: %d", st)
	}
	for _, c := range []*wsClient{ws, spec} {
		ce := <-c.closed
		if ce.Code != hub.CloseFreed || ce.Reason != hub.ReasonServerBan {
			t.Errorf("socket closed with %d %q, want 4003 %q", ce.Code, ce.Reason, hub.ReasonServerBan)
		}
	}
	if st := s.call("POST", "/api/tables", tok, map[string]any{"name": "Again"}, nil); st != http.StatusUnauthorized {
		t.Errorf("a banned player makes a table: %d, want 401", st)
	}
	var tb map[string]any
	s.call("POST", "/api/tables", other, map[string]any{"name": "Bob's"}, &tb)
	if st := s.call("POST", "/api/tables/"+tb["id"].(string)+"/seats", tok, map[string]any{"character": map[string]string{"name": "X"}}, nil); st != http.StatusUnauthorized {
		t.Errorf("a banned player sits: %d, want 401", st)
	}
	if st := s.call("GET", "/api/admin/players?q="+pid, "admin", nil, &found); st != http.StatusOK || len(found.Players) != 1 || !found.Players[0].Banned {
		t.Errorf("search by id after the ban: %+v", found)
	}
	if st := s.call("DELETE", "/api/admin/players/"+pid+"/ban", "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("unban: %d", st)
	}
	if st := s.call("GET", "/api/players/me", tok, nil, nil); st != http.StatusOK {
		t.Errorf("the token after the ban is lifted: %d, want 200", st)
	}

	// Export: all their data.
	var x struct {
		Characters []map[string]any `json:"characters"`
		Chat       []map[string]any `json:"chat"`
		Actions    []map[string]any `json:"actions"`
	}
	if st := s.call("GET", "/api/admin/players/"+pid+"/export", "admin", nil, &x); st != http.StatusOK ||
		len(x.Characters) != 1 || x.Characters[0]["backstory"] != backstory || len(x.Chat) != 1 || x.Chat[0]["text"] != chat || len(x.Actions) < 2 {
		t.Fatalf("export: %d %+v", st, x)
	}

	var before int
	count := func() int {
		var evs struct {
			Events []any `json:"events"`
		}
		s.call("GET", "/api/tables/"+id+"/events?since=0&limit=1000", "", nil, &evs)
		return len(evs.Events)
	}
	before = count()
	ws2 := s.dial(id, tok, "player")
	if st := s.call("DELETE", "/api/admin/players/"+pid, "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("erase: %d", st)
	}
	if ce := <-ws2.closed; ce.Code != hub.CloseFreed || ce.Reason != hub.ReasonErased {
		t.Errorf("socket closed with %d %q at the erasure", ce.Code, ce.Reason)
	}
	if st := s.call("GET", "/api/players/me", tok, nil, nil); st != http.StatusUnauthorized {
		t.Errorf("the erased player's token: %d, want 401", st)
	}
	if n := count(); n != before {
		t.Errorf("events after the erasure %d, before %d: the log must keep its shape", n, before)
	}
	_, story := get(t, s.srv.URL+"/api/tables/"+id+"/story?format=md")
	if !strings.Contains(story, "deleted player") || strings.Contains(story, name) {
		t.Errorf("story after the erasure: %.500s", story)
	}
	// The table is still loaded: its snapshot and a resume from seq 0
	// (its recent events in memory) hold neither the name nor the chat.
	frames := func(c *wsClient, what string, last func(f map[string]any) bool) string {
		var all strings.Builder
		c.await(what, func(f map[string]any) bool {
			b, _ := json.Marshal(f)
			all.Write(b)
			return last(f)
		})
		c.c.CloseNow()
		return all.String()
	}
	snap := frames(s.dial(id, other, "player"), "the snapshot", func(f map[string]any) bool { return f["type"] == "snapshot" })
	if !strings.Contains(snap, "deleted player") || !strings.Contains(snap, `"recent"`) {
		t.Errorf("snapshot after the erasure names no deleted player or has no recent events: %.300s", snap)
	}
	var seq float64
	resume := frames(s.dial(id, other, "player&since=0"), "the resume up to now", func(f map[string]any) bool {
		if f["type"] == "welcome" {
			seq = f["seq"].(float64)
		}
		return f["type"] == "event" && f["seq"] == seq
	})
	if !strings.Contains(resume, `"kind":"chat"`) {
		t.Errorf("the resume from 0 has no chat event: %.300s", resume)
	}
	for what, text := range map[string]string{"snapshot": snap, "resume from 0": resume} {
		for _, secret := range []string{name, chat} {
			if strings.Contains(text, secret) {
				t.Errorf("the %s after the erasure holds %q", what, secret)
			}
		}
	}

	// Close writes everything out; then every text column is searched.
	s.srv.Close()
	if err := s.tv.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", "file:"+cfg.DB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// The NPC the backstory brought to life (Elira) stays: the world and
	// the log keep their shape.
	for _, needle := range []string{name, chat, backstory} {
		if where := searchEveryColumn(t, raw, needle); len(where) > 0 {
			t.Errorf("%q is still in %v", needle, where)
		}
	}
	if where := searchEveryColumn(t, raw, "deleted player"); len(where) == 0 {
		t.Error("no \"deleted player\" anywhere: the name was not replaced")
	}
}

// searchEveryColumn returns the table.column of every column of every
// table (shadow tables included) that holds needle in its text.
func searchEveryColumn(t *testing.T, d *sql.DB, needle string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := d.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var where []string
	for _, tb := range tables {
		cols, err := d.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", tb)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for cols.Next() {
			var n string
			cols.Scan(&n)
			names = append(names, n)
		}
		cols.Close()
		for _, c := range names {
			var n int
			q := fmt.Sprintf(`SELECT COUNT(*) FROM %q WHERE instr(CAST(%q AS TEXT), ?) > 0`, tb, c)
			if err := d.QueryRowContext(ctx, q, needle).Scan(&n); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if n > 0 {
				where = append(where, tb+"."+c)
			}
		}
	}
	return where
}

// TestEraseOfAPlayerWhoLeft: a player who acted at a table and left it is
// erased while the table is loaded. The store deletes that table's save
// points (they hold the player's state and action), and so does the table
// in memory: its snapshot offers no undo, and a retcon is refused with a
// conflict that says why, not an internal error.
func TestEraseOfAPlayerWhoLeft(t *testing.T) {
	cfg := testConfig(t)
	s := startOp(t, cfg)
	pid, tok := s.player("Quillithorn")
	_, owner := s.player("Bob")
	id := s.table(owner, "Lanterns", "Cora", "")
	s.sit(tok, id, "Bram", "my sister Elira keeps the lighthouse")
	ws := s.dial(id, tok, "player")
	ws.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	ws.await("the ack", func(f map[string]any) bool { return f["type"] == "ack" && f["id"] == "a1" })
	s.settle(id)
	if st := s.call("DELETE", "/api/tables/"+id+"/seats/me", tok, nil, nil); st != http.StatusNoContent {
		t.Fatalf("leave: %d", st)
	}
	s.settle(id)
	if st := s.call("DELETE", "/api/admin/players/"+pid, "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("erase: %d", st)
	}
	var snap struct {
		Undoable int `json:"undoable"`
	}
	if st := s.call("GET", "/api/tables/"+id, owner, nil, &snap); st != http.StatusOK || snap.Undoable != 0 {
		t.Errorf("snapshot after the erasure: %d, undoable %d, want 0", st, snap.Undoable)
	}
	var body struct {
		Error struct{ Code, Message string }
	}
	if st := s.call("POST", "/api/tables/"+id+"/retcon", owner, map[string]string{"then": "drop"}, &body); st != http.StatusConflict {
		t.Errorf("retcon after the erasure: %d %+v, want 409", st, body)
	}
}
