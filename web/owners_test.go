package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsDial opens a websocket on the test server at path (with its query);
// it returns the HTTP status of a refused upgrade.
func (e *testEnv) wsDial(path, token string) (*websocket.Conn, int) {
	e.t.Helper()
	u := strings.Replace(e.url, "http", "ws", 1) + path
	if token != "" {
		u += "&token=" + token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		if res == nil {
			e.t.Fatalf("dial %s: %v", u, err)
		}
		return nil, res.StatusCode
	}
	e.t.Cleanup(func() { c.CloseNow() })
	return c, http.StatusSwitchingProtocols
}

// streamStatus is the status of a GET whose body never ends (a stream).
func (e *testEnv) streamStatus(path, token string) int {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// closeOf reads c until it closes and returns the close status and reason.
func closeOf(t *testing.T, c *websocket.Conn) (websocket.StatusCode, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := c.Read(ctx); err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("read: %v", err)
			}
			return ce.Code, ce.Reason
		}
	}
}

// A stranger learns nothing of a private table: every route answers 404,
// as for a table that does not exist; the owner, a seated player and the
// holder of the current invite see it, and a rotated code dies at once.
func TestPrivateTableIsInvisibleToStrangers(t *testing.T) {
	e := newTestEnv(t)
	ownerID, owner := e.newPlayer("Owner")
	_, stranger := e.newPlayer("Stranger")
	_, guest := e.newPlayer("Guest")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Secret", "private": true}, owner)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	ts := r.json(t)
	id := ts["id"].(string)
	if ts["owner_id"] != ownerID || ts["private"] != true || ts["npc_hp"] != "exact" {
		t.Errorf("summary = %v", ts)
	}
	routes := []string{"/api/tables/" + id, "/api/tables/" + id + "/events", "/api/tables/" + id + "/story",
		"/api/tables/" + id + "/stream", "/tables/" + id, "/api/tables/" + id + "/quests", "/api/tables/" + id + "/inventory",
		"/api/tables/" + id + "/memories", "/api/tables/" + id + "/calls", "/api/tables/" + id + "/notes"}
	missing := e.do("GET", "/api/tables/t-nosuchtable", nil, stranger)
	for _, tok := range []string{"", stranger} {
		for _, path := range routes {
			r := e.do("GET", path, nil, tok)
			if tok == "" && r.status == http.StatusUnauthorized {
				continue // a route that needs a player, before anything else
			}
			if r.status != http.StatusNotFound {
				t.Errorf("%s as %q: %d, want 404", path, tok, r.status)
			}
			if strings.HasPrefix(path, "/api/tables/"+id) && path == "/api/tables/"+id && string(r.body) != strings.Replace(string(missing.body), "t-nosuchtable", id, 1) {
				t.Errorf("404 body %s differs from a missing table's %s", r.body, missing.body)
			}
		}
		for _, role := range []string{"spectator", "player"} {
			if _, st := e.wsDial("/ws/tables/"+id+"?role="+role, tok); st != http.StatusNotFound && !(tok == "" && role == "player" && st == http.StatusUnauthorized) {
				t.Errorf("websocket %s as %q: %d, want 404", role, tok, st)
			}
		}
		var list struct{ Tables []map[string]any }
		_ = json.Unmarshal(e.do("GET", "/api/tables", nil, tok).body, &list)
		for _, tb := range list.Tables {
			if tb["id"] == id {
				t.Errorf("lobby list as %q shows the private table", tok)
			}
		}
		if strings.Contains(string(e.do("GET", "/", nil, tok).body), id) {
			t.Errorf("lobby page as %q shows the private table", tok)
		}
	}
	// The owner sees it everywhere, and in the lobby list.
	for _, path := range routes[:3] {
		if r := e.do("GET", path+"?since=0", nil, owner); r.status != http.StatusOK {
			t.Errorf("%s as owner: %d", path, r.status)
		}
	}
	if st := e.streamStatus("/api/tables/"+id+"/stream", owner); st != http.StatusOK {
		t.Errorf("stream as owner: %d", st)
	}
	if !strings.Contains(string(e.do("GET", "/api/tables", nil, owner).body), id) {
		t.Errorf("the owner's lobby list misses the table")
	}
	if r := e.do("POST", "/api/tables/"+id+"/session", nil, stranger); r.status != http.StatusNotFound {
		t.Errorf("session as a stranger: %d, want 404", r.status)
	}
	if lobby := string(e.do("GET", "/", nil, owner).body); !strings.Contains(lobby, `id="your-tables"`) || !strings.Contains(lobby, id) {
		t.Errorf("the owner's lobby has no Your tables section with the table")
	}
	// Owner routes: a stranger gets 404 on a table it cannot see.
	for _, c := range []struct{ method, path string }{
		{"POST", "/invite"}, {"PATCH", ""}, {"DELETE", "/seats/1"}, {"POST", "/bans"}, {"POST", "/pause"}, {"POST", "/resume"},
		{"POST", "/notes"}, {"DELETE", "/notes/n1"}, {"POST", "/retcon"}, {"POST", "/events/1/edit"}, {"POST", "/events/1/feedback"},
	} {
		var body any
		if c.method == "PATCH" {
			body = map[string]any{"name": "Mine"}
		}
		switch c.path {
		case "/bans":
			body = map[string]any{"player_id": ownerID}
		case "/notes", "/events/1/edit":
			body = map[string]any{"text": "The innkeeper is called Bram."}
		case "/retcon":
			body = map[string]any{"then": "drop"}
		case "/events/1/feedback":
			body = map[string]any{"score": 1}
		}
		wantError(t, e.do(c.method, "/api/tables/"+id+c.path, body, stranger), http.StatusNotFound, "not_found")
	}

	// The invite: a code lets the guest see, sit with it, and rotates.
	inv := e.do("POST", "/api/tables/"+id+"/invite", nil, owner)
	if inv.status != http.StatusCreated {
		t.Fatalf("invite: %d %s", inv.status, inv.body)
	}
	code := inv.json(t)["code"].(string)
	if len(code) < 11 || inv.json(t)["url"] != "/join/"+code {
		t.Errorf("invite = %s", inv.body)
	}
	if r := e.do("GET", "/api/tables/"+id+"?invite="+code, nil, guest); r.status != http.StatusOK {
		t.Errorf("snapshot with the code: %d", r.status)
	}
	if c, st := e.wsDial("/ws/tables/"+id+"?role=spectator&invite="+code, ""); st != http.StatusSwitchingProtocols {
		t.Errorf("spectator with the code: %d", st)
	} else {
		c.CloseNow()
	}
	if r := e.do("GET", "/join/"+code, nil, ""); r.status != http.StatusOK || !strings.Contains(string(r.body), "Secret") {
		t.Errorf("join page: %d", r.status)
	}
	rot := e.do("POST", "/api/tables/"+id+"/invite", nil, owner)
	code2 := rot.json(t)["code"].(string)
	if code2 == code {
		t.Fatal("the invite did not rotate")
	}
	for _, path := range []string{"/api/tables/" + id + "?invite=" + code, "/join/" + code} {
		if r := e.do("GET", path, nil, guest); r.status != http.StatusNotFound {
			t.Errorf("%s with the old code: %d, want 404", path, r.status)
		}
	}
	if _, st := e.wsDial("/ws/tables/"+id+"?role=spectator&invite="+code, ""); st != http.StatusNotFound {
		t.Errorf("spectator with the old code: %d, want 404", st)
	}
	sit := map[string]any{"character": map[string]any{"name": "Gil"}, "invite": code}
	wantError(t, e.do("POST", "/api/tables/"+id+"/seats", sit, guest), http.StatusNotFound, "not_found")
	sit["invite"] = code2
	if r := e.do("POST", "/api/tables/"+id+"/seats", sit, guest); r.status != http.StatusCreated {
		t.Fatalf("sit with the new code: %d %s", r.status, r.body)
	}
	// Seated, the guest needs no code any more, and finds the table in
	// their lists.
	if r := e.do("GET", "/api/tables/"+id, nil, guest); r.status != http.StatusOK {
		t.Errorf("snapshot as seated: %d", r.status)
	}
	if !strings.Contains(string(e.do("GET", "/api/tables", nil, guest).body), id) {
		t.Errorf("the seated player's lobby list misses the table")
	}
	var mine struct{ Tables []map[string]any }
	_ = json.Unmarshal(e.do("GET", "/api/players/me/tables", nil, guest).body, &mine)
	if len(mine.Tables) != 1 || mine.Tables[0]["id"] != id || mine.Tables[0]["seat"] != "1" || mine.Tables[0]["owner"] != false {
		t.Errorf("guest's tables = %v", mine.Tables)
	} else if ch, _ := mine.Tables[0]["character"].(map[string]any); ch["name"] != "Gil" || mine.Tables[0]["last_event_at"] == "" {
		t.Errorf("guest's character = %v", mine.Tables[0])
	}
	mine.Tables = nil
	_ = json.Unmarshal(e.do("GET", "/api/players/me/tables", nil, owner).body, &mine)
	if len(mine.Tables) != 1 || mine.Tables[0]["owner"] != true || mine.Tables[0]["seat"] != nil {
		t.Errorf("owner's tables = %v", mine.Tables)
	}
	wantError(t, e.do("GET", "/api/players/me/tables", nil, ""), http.StatusUnauthorized, "unauthorized")
}

// The owner's routes: a non-owner who sees the table gets 403, bad input
// a 4xx that changes nothing, and PATCH changes the summary.
func TestOwnerRoutes(t *testing.T) {
	e := newTestEnv(t)
	_, owner := e.newPlayer("Owner")
	playerID, player := e.newPlayer("Player")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Open"}, owner).json(t)["id"].(string)
	if r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Pim"}}, player); r.status != http.StatusCreated {
		t.Fatalf("sit: %d", r.status)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/invite", nil}, {"PATCH", "", map[string]any{"name": "Mine"}}, {"POST", "/bans", map[string]any{"player_id": playerID}},
		{"DELETE", "/bans/" + playerID, nil}, {"POST", "/pause", nil}, {"POST", "/resume", nil}, {"DELETE", "/seats/2", nil},
	} {
		wantError(t, e.do(c.method, "/api/tables/"+id+c.path, c.body, player), http.StatusForbidden, "forbidden")
	}
	before := e.do("GET", "/api/tables/"+id, nil, owner).json(t)["table"]
	for name, body := range map[string]any{
		"empty":       map[string]any{},
		"bad npc_hp":  map[string]any{"npc_hp": "percent"},
		"empty name":  map[string]any{"name": "  "},
		"timeout":     map[string]any{"turn_timeout_s": -1},
		"wrong type":  map[string]any{"private": "yes"},
		"unknown key": map[string]any{"owner_id": "p_x"},
	} {
		r := e.do("PATCH", "/api/tables/"+id, body, owner)
		if r.status != http.StatusBadRequest {
			t.Errorf("PATCH %s: %d, want 400", name, r.status)
		}
	}
	wantError(t, e.do("POST", "/api/tables/"+id+"/bans", map[string]any{"player_id": "not an id!"}, owner), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", "/api/tables/"+id+"/bans", map[string]any{}, owner), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("DELETE", "/api/tables/"+id+"/bans/p_nobody", nil, owner), http.StatusNotFound, "not_found")
	wantError(t, e.do("DELETE", "/api/tables/"+id+"/seats/7", nil, owner), http.StatusNotFound, "not_found")
	if after := e.do("GET", "/api/tables/"+id, nil, owner).json(t)["table"]; !jsonEqual(before, after) {
		t.Errorf("bad input changed the table: %v → %v", before, after)
	}
	r := e.do("PATCH", "/api/tables/"+id, map[string]any{"name": "Renamed", "private": true, "npc_hp": "words", "turn_timeout_s": 60}, owner)
	if r.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.status, r.body)
	}
	if s := r.json(t); s["name"] != "Renamed" || s["private"] != true || s["npc_hp"] != "words" || s["turn_timeout_s"] != float64(60) {
		t.Errorf("PATCH answered %v", s)
	}
	// The pause by the owner is the operator's, said by the owner.
	if r := e.do("POST", "/api/tables/"+id+"/pause", nil, owner); r.status != http.StatusNoContent {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	if snap := e.do("GET", "/api/tables/"+id, nil, owner).json(t); snap["paused"] != true {
		t.Errorf("not paused: %v", snap["paused"])
	}
	evs := string(e.do("GET", "/api/tables/"+id+"/events?limit=500", nil, owner).body)
	if !strings.Contains(evs, `"action":"pause","by":"owner"`) {
		t.Errorf("no owner's pause event in %s", evs)
	}
	if r := e.do("POST", "/api/tables/"+id+"/resume", nil, owner); r.status != http.StatusNoContent {
		t.Fatalf("resume: %d", r.status)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Kick and ban close the player's sockets with 4003 and a reason the page
// shows; a banned player can no longer sit, watch or use an invite.
func TestKickAndBan(t *testing.T) {
	e := newTestEnv(t)
	_, owner := e.newPlayer("Owner")
	pid, player := e.newPlayer("Player")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Open"}, owner).json(t)["id"].(string)
	sit := func() string {
		r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Pim"}}, player)
		if r.status != http.StatusCreated {
			t.Fatalf("sit: %d %s", r.status, r.body)
		}
		return r.json(t)["seat"].(string)
	}
	seat := sit()
	e.arrive(id, pid)
	conn, st := e.wsDial("/ws/tables/"+id+"?role=player", player)
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("dial: %d", st)
	}
	if _, _, err := conn.Read(context.Background()); err != nil { // welcomed
		t.Fatal(err)
	}
	if r := e.do("DELETE", "/api/tables/"+id+"/seats/"+seat, nil, owner); r.status != http.StatusNoContent {
		t.Fatalf("kick: %d %s", r.status, r.body)
	}
	if code, reason := closeOf(t, conn); code != 4003 || reason != "removed by the table's owner" {
		t.Errorf("kicked socket closed %d %q", code, reason)
	}
	evs := string(e.do("GET", "/api/tables/"+id+"/events?limit=500", nil, owner).body)
	if !strings.Contains(evs, `"kind":"player_left"`) || !strings.Contains(evs, `"by":"owner"`) {
		t.Errorf("no player_left by owner in %s", evs)
	}

	// Seated again, watching in a second tab, then banned: both close.
	seat = sit()
	e.arrive(id, pid)
	play, _ := e.wsDial("/ws/tables/"+id+"?role=player", player)
	watch, _ := e.wsDial("/ws/tables/"+id+"?role=spectator", player)
	for _, c := range []*websocket.Conn{play, watch} { // joined: welcomed
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if _, _, err := c.Read(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if r := e.do("POST", "/api/tables/"+id+"/bans", map[string]any{"player_id": pid}, owner); r.status != http.StatusNoContent {
		t.Fatalf("ban: %d %s", r.status, r.body)
	}
	for name, c := range map[string]*websocket.Conn{"player": play, "spectator": watch} {
		if code, reason := closeOf(t, c); code != 4003 || reason != "banned from this table" {
			t.Errorf("%s socket closed %d %q", name, code, reason)
		}
	}
	wantError(t, e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Pim"}}, player), http.StatusForbidden, "forbidden")
	if _, st := e.wsDial("/ws/tables/"+id+"?role=spectator", player); st != http.StatusForbidden {
		t.Errorf("banned spectator: %d, want 403", st)
	}
	code := e.do("POST", "/api/tables/"+id+"/invite", nil, owner).json(t)["code"].(string)
	if r := e.do("GET", "/join/"+code, nil, player); r.status != http.StatusNotFound {
		t.Errorf("banned player's invite: %d, want 404", r.status)
	}
	// Lifted, they may sit again.
	if r := e.do("DELETE", "/api/tables/"+id+"/bans/"+pid, nil, owner); r.status != http.StatusNoContent {
		t.Fatalf("unban: %d", r.status)
	}
	_ = seat
	sit()
}

// A closed table's log stays readable to the people who played it, and
// to them only.
func TestClosedTableLogStaysWithItsPlayers(t *testing.T) {
	e := newTestEnv(t)
	_, owner := e.newPlayer("Owner")
	pid, player := e.newPlayer("Player")
	_, stranger := e.newPlayer("Stranger")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Done"}, owner).json(t)["id"].(string)
	e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Pim"}}, player)
	e.arrive(id, pid)
	if r := e.do("DELETE", "/api/admin/tables/"+id, nil, testAdminToken); r.status != http.StatusNoContent {
		t.Fatalf("close: %d %s", r.status, r.body)
	}
	for _, path := range []string{"/api/tables/" + id + "/events", "/api/tables/" + id + "/story"} {
		for _, tok := range []string{owner, player} {
			if r := e.do("GET", path, nil, tok); r.status != http.StatusOK {
				t.Errorf("%s: %d, want 200", path, r.status)
			}
		}
		for _, tok := range []string{"", stranger} {
			if r := e.do("GET", path, nil, tok); r.status != http.StatusNotFound {
				t.Errorf("%s as a stranger: %d, want 404", path, r.status)
			}
		}
	}
	if r := e.do("GET", "/api/tables/"+id+"/story", nil, player); !strings.Contains(string(r.body), "Pim") {
		t.Errorf("story misses the character: %s", r.body)
	}
	var mine struct{ Tables []map[string]any }
	_ = json.Unmarshal(e.do("GET", "/api/players/me/tables", nil, player).body, &mine)
	if len(mine.Tables) != 1 || mine.Tables[0]["status"] != "closed" {
		t.Errorf("closed table in the player's list: %v", mine.Tables)
	}
}
