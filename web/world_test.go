package web_test

import (
	"strings"
	"testing"
	"time"
)

func TestWorldEndpoints(t *testing.T) {
	e := newTestEnv(t)
	tid := e.newTable(map[string]any{"name": "World"})
	_, tok := e.newPlayer("Ann")
	_, stranger := e.newPlayer("Zed")

	// Quests are public, like the snapshot.
	r := e.do("GET", "/api/tables/"+tid+"/quests", nil, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"lantern-quest"`) || !strings.Contains(string(r.body), `"giver_name":"Maren Voss"`) {
		t.Fatalf("quests: %d %s", r.status, r.body)
	}
	wantError(t, e.do("GET", "/api/tables/nope/quests", nil, ""), 404, "not_found")

	// The inventory is the caller's own.
	wantError(t, e.do("GET", "/api/tables/"+tid+"/inventory", nil, ""), 401, "unauthorized")
	wantError(t, e.do("GET", "/api/tables/"+tid+"/inventory", nil, stranger), 403, "forbidden")
	r = e.do("POST", "/api/tables/"+tid+"/seats", map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior",
		"backstory": "I carry my grandfather's battered shield. My brother Tomas runs the mill."}}, tok)
	if r.status != 201 {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	// Sitting with a backstory queued the session start; it plays soon.
	var inv string
	for range 100 {
		inv = string(e.do("GET", "/api/tables/"+tid+"/inventory", nil, tok).body)
		if strings.Contains(inv, "Grandfather's battered shield") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(inv, `"gold":10`) || !strings.Contains(inv, "Grandfather's battered shield") {
		t.Fatalf("inventory after the session start: %s", inv)
	}
	// A character starts once.
	wantError(t, e.do("POST", "/api/tables/"+tid+"/session", nil, tok), 409, "conflict")
	wantError(t, e.do("POST", "/api/tables/"+tid+"/session", nil, stranger), 403, "forbidden")
	wantError(t, e.do("POST", "/api/tables/"+tid+"/session", nil, ""), 401, "unauthorized")

	// Without a backstory the session start is queued all the same (asked
	// for while the table is paused, it is the one queued); the DM
	// narrates Brina's arrival, and she too starts once.
	if r := e.do("POST", "/api/admin/tables/"+tid+"/pause", nil, testAdminToken); r.status != 204 {
		t.Fatalf("pause: %d %s", r.status, r.body)
	}
	pid2, tok2 := e.newPlayer("Bob")
	if r := e.do("POST", "/api/tables/"+tid+"/seats", map[string]any{"character": map[string]any{"name": "Brina"}}, tok2); r.status != 201 {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	first := e.do("POST", "/api/tables/"+tid+"/session", nil, tok2)
	again := e.do("POST", "/api/tables/"+tid+"/session", nil, tok2)
	if first.status != 202 || !strings.Contains(string(first.body), `"action_id"`) || string(again.body) != string(first.body) {
		t.Fatalf("session while queued: %d %s, then %s", first.status, first.body, again.body)
	}
	if r := e.do("POST", "/api/admin/tables/"+tid+"/resume", nil, testAdminToken); r.status != 204 {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	e.arrive(tid, pid2)
	wantError(t, e.do("POST", "/api/tables/"+tid+"/session", nil, tok2), 409, "conflict")
}
