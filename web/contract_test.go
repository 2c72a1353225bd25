package web_test

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The shapes of PROTOCOL.md's sections "Table owners", "Undo, notes and
// the owner's word to the DM", "Adventures", "Operator, continued" and
// "Several nodes", key by key, over a real server: every key the protocol
// lists is there with its JSON type, and every other key is one the
// README documents as additive (or one listed here with why).

// shape is an object's keys: the protocol's, each with its JSON type
// ("string", "number", "bool", "object", "array", "null", or several
// joined by "|"), and the additive ones allowed beside them.
type shape struct {
	keys  map[string]string
	extra []string
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "?"
}

// check reports where m differs from s; optional keys (named with a
// trailing "?") may be absent.
func (s shape) check(t *testing.T, what string, m map[string]any) {
	t.Helper()
	for k, typ := range s.keys {
		name, optional := strings.CutSuffix(k, "?")
		v, ok := m[name]
		if !ok {
			if !optional {
				t.Errorf("%s: no %q (have %v)", what, name, sortedKeys(m))
			}
			continue
		}
		if got := jsonType(v); !slices.Contains(strings.Split(typ, "|"), got) {
			t.Errorf("%s: %q is %s %v, want %s", what, name, got, v, typ)
		}
	}
	for k := range m {
		if _, ok := s.keys[k]; ok {
			continue
		}
		if _, ok := s.keys[k+"?"]; ok {
			continue
		}
		if !slices.Contains(s.extra, k) {
			t.Errorf("%s: undocumented key %q", what, k)
		}
	}
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func obj(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T %v, want an object", what, v, v)
	}
	return m
}

func arr(t *testing.T, v any, what string) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s is %T %v, want an array", what, v, v)
	}
	return a
}

// tableSummary is PROTOCOL.md's TableSummary with the owner's fields; the
// README's additive turn_timeout_s and adventure_name beside them.
var tableSummary = shape{keys: map[string]string{
	"id": "string", "name": "string", "adventure": "string", "ruleset": "string", "combat_mode": "string",
	"mode": "string", "seats": "number", "seated": "number", "spectators": "number", "status": "string",
	"owner_id": "string", "private": "bool", "npc_hp": "string",
}, extra: []string{"turn_timeout_s", "adventure_name"}}

func (s shape) plus(keys map[string]string, extra ...string) shape {
	out := shape{keys: map[string]string{}, extra: append(slices.Clone(s.extra), extra...)}
	for k, v := range s.keys {
		out.keys[k] = v
	}
	for k, v := range keys {
		out.keys[k] = v
	}
	return out
}

func TestOwnersContractShapes(t *testing.T) {
	w := newBadWorld(t)
	e := w.e

	r := e.do("POST", "/api/tables", map[string]any{"name": "Words", "private": true, "npc_hp": "words"}, w.owner)
	if r.status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.json(t)
	tableSummary.check(t, "POST /api/tables", created)
	if created["private"] != true || created["npc_hp"] != "words" {
		t.Errorf("created summary = %s", r.body)
	}
	id := created["id"].(string)

	r = e.do("POST", "/api/tables/"+id+"/invite", nil, w.owner)
	if r.status != http.StatusCreated {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	inv := r.json(t)
	shape{keys: map[string]string{"code": "string", "url": "string"}}.check(t, "invite", inv)
	code := inv["code"].(string)
	// ≥ 64 random bits, URL-safe: 11 or more base64url characters.
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{11,}$`).MatchString(code) || inv["url"] != "/join/"+code {
		t.Errorf("invite = %s", r.body)
	}

	r = e.do("PATCH", "/api/tables/"+id, map[string]any{"npc_hp": "exact", "private": false}, w.owner)
	if r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.body)
	}
	patched := r.json(t)
	tableSummary.check(t, "PATCH", patched)
	if patched["npc_hp"] != "exact" || patched["private"] != false {
		t.Errorf("patched summary = %s", r.body)
	}

	r = e.do("GET", "/api/tables", nil, "")
	for i, ts := range arr(t, r.json(t)["tables"], "tables") {
		tableSummary.check(t, "GET /api/tables["+jsonInt(int64(i))+"]", obj(t, ts, "table"))
	}

	// GET /api/players/me/tables: the summary and the player's side.
	r = e.do("GET", "/api/players/me/tables", nil, w.member)
	mine := arr(t, r.json(t)["tables"], "my tables")
	if len(mine) != 2 {
		t.Fatalf("my tables = %s", r.body)
	}
	myTable := tableSummary.plus(map[string]string{"seat?": "string", "character?": "object", "owner": "bool", "last_event_at": "string"})
	for i, m := range mine {
		mt := obj(t, m, "my table")
		myTable.check(t, "my table "+jsonInt(int64(i)), mt)
		shape{keys: map[string]string{"id": "string", "name": "string", "class": "string", "level": "number"}}.check(t, "my character", obj(t, mt["character"], "character"))
	}
	if a, b := mine[0].(map[string]any)["last_event_at"].(string), mine[1].(map[string]any)["last_event_at"].(string); a < b {
		t.Errorf("my tables not newest activity first: %s before %s", a, b)
	}
	r = e.do("GET", "/api/players/me/tables", nil, w.owner)
	for _, m := range arr(t, r.json(t)["tables"], "owner's tables") {
		mt := obj(t, m, "owner's table")
		if mt["owner"] != true {
			t.Errorf("owner's table says owner %v", mt["owner"])
		}
	}
}

// note, retcon and edit answers and events, key by key.
func TestNotesContractShapes(t *testing.T) {
	w := newBadWorld(t)
	e := w.e
	owner := e.ws(w.pub, "spectator", w.owner)

	note := shape{keys: map[string]string{"id": "string", "text": "string", "by": "string", "created_at": "string"}, extra: []string{"by_name"}}
	r := e.do("GET", "/api/tables/"+w.pub+"/notes", nil, "")
	body := r.json(t)
	shape{keys: map[string]string{"notes": "array"}, extra: []string{"owner"}}.check(t, "GET notes", body)
	for _, n := range arr(t, body["notes"], "notes") {
		note.check(t, "note", obj(t, n, "note"))
	}
	r = e.do("POST", "/api/tables/"+w.pub+"/notes", map[string]any{"text": "Bram keeps the keys."}, w.owner)
	if r.status != http.StatusCreated {
		t.Fatalf("note: %d %s", r.status, r.body)
	}
	n := r.json(t)
	note.check(t, "POST note", n)
	f := owner.until("note event", func(f wsFrame) bool { return f.Type == "event" && f.Kind == "note" })
	shape{keys: map[string]string{"id": "string", "text": "string", "by": "string"}}.check(t, "note event", f.Data)
	if r := e.do("DELETE", "/api/tables/"+w.pub+"/notes/"+n["id"].(string), nil, w.owner); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("remove note: %d %s", r.status, r.body)
	}
	f = owner.until("note_removed event", func(f wsFrame) bool { return f.Type == "event" && f.Kind == "note_removed" })
	shape{keys: map[string]string{"id": "string", "by": "string"}}.check(t, "note_removed event", f.Data)

	r = e.do("POST", "/api/tables/"+w.pub+"/events/"+jsonInt(w.narration)+"/edit", map[string]any{"text": "Rain, then."}, w.owner)
	if r.status != http.StatusOK {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	editShape := shape{keys: map[string]string{"seq": "number", "text": "string", "by": "string"}}
	editShape.check(t, "edit answer", r.json(t))
	f = owner.until("edit event", func(f wsFrame) bool { return f.Type == "event" && f.Kind == "edit" })
	editShape.check(t, "edit event", f.Data)
	if f.Data["seq"] != float64(w.narration) || f.Data["text"] != "Rain, then." {
		t.Errorf("edit event = %s", f.raw)
	}

	if r := e.do("POST", "/api/tables/"+w.pub+"/events/"+jsonInt(w.narration)+"/feedback", map[string]any{"score": -1}, w.member); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("feedback: %d %s", r.status, r.body)
	}

	r = e.do("POST", "/api/tables/"+w.pub+"/retcon", map[string]any{"then": "drop"}, w.owner)
	if r.status != http.StatusOK {
		t.Fatalf("retcon: %d %s", r.status, r.body)
	}
	rc := r.json(t)
	shape{keys: map[string]string{"turn": "string", "from_seq": "number", "to_seq": "number"}}.check(t, "retcon answer", rc)
	f = owner.until("retcon event", func(f wsFrame) bool { return f.Type == "event" && f.Kind == "retcon" })
	shape{keys: map[string]string{"turn": "string", "from_seq": "number", "to_seq": "number", "by": "string", "action_id": "string"},
		extra: []string{"then"}}.check(t, "retcon event", f.Data)
	for _, k := range []string{"turn", "from_seq", "to_seq"} {
		if f.Data[k] != rc[k] {
			t.Errorf("retcon event %s = %v, answer %v", k, f.Data[k], rc[k])
		}
	}
	// "a fresh snapshot follows"
	owner.until("snapshot after the retcon", func(f wsFrame) bool { return f.Type == "snapshot" })
}

// The operator's side: the overview's nodes, a row's owner, players,
// console users and a seat freed by the operator.
func TestOperatorContractShapes(t *testing.T) {
	w := newBadWorld(t)
	e := w.e

	r := e.do("GET", "/api/admin/overview", nil, testAdminToken)
	ov := r.json(t)
	nodes := arr(t, ov["nodes"], "nodes")
	if len(nodes) != 1 {
		t.Fatalf("nodes = %v", nodes)
	}
	node := shape{keys: map[string]string{"id": "string", "addr": "string", "state": "string", "tables": "number", "sockets": "number", "expires_at": "string|null"}}
	node.check(t, "node", obj(t, nodes[0], "node"))
	if st := obj(t, nodes[0], "node")["state"]; st != "alive" {
		t.Errorf("node state %v", st)
	}

	r = e.do("GET", "/api/admin/tables", nil, testAdminToken)
	for _, row := range arr(t, r.json(t)["tables"], "admin tables") {
		m := obj(t, row, "admin table")
		if o, ok := m["owner"]; !ok {
			t.Errorf("admin row without owner: %v", sortedKeys(m))
		} else if o != nil {
			shape{keys: map[string]string{"node": "string", "addr": "string", "epoch": "number"}}.check(t, "row owner", obj(t, o, "owner"))
		}
		for _, k := range []string{"paused", "connections", "pending"} {
			if _, ok := m[k]; !ok {
				t.Errorf("admin row without %q", k)
			}
		}
	}

	r = e.do("GET", "/api/admin/players?q=Other", nil, testAdminToken)
	ps := arr(t, r.json(t)["players"], "players")
	if len(ps) != 1 {
		t.Fatalf("players = %s", r.body)
	}
	shape{keys: map[string]string{"id": "string", "name": "string", "created_at": "string", "tables": "number", "banned": "bool"}}.check(t, "player", obj(t, ps[0], "player"))

	r = e.do("POST", "/api/admin/users", map[string]any{"name": "Quinn", "role": "moderator"}, testAdminToken)
	if r.status != http.StatusCreated {
		t.Fatalf("console user: %d %s", r.status, r.body)
	}
	if tok, _ := r.json(t)["token"].(string); tok == "" {
		t.Errorf("console user answer without token: %s", r.body)
	}

	r = e.do("GET", "/api/admin/alerts", nil, testAdminToken)
	shape{keys: map[string]string{"alerts": "array"}}.check(t, "alerts", r.json(t))

	// A seat the operator frees: 4003 with its reason, and player_left
	// saying who.
	watch := e.ws(w.pub, "spectator", w.owner)
	conn, st := e.wsDial("/ws/tables/"+w.pub+"?role=player", w.other)
	if st != http.StatusSwitchingProtocols {
		t.Fatalf("dial: %d", st)
	}
	// Joined before the seat is freed: a socket still joining is refused
	// with "your seat was freed" instead.
	welcomed(t, conn)
	r = e.do("GET", "/api/tables/"+w.pub, nil, "")
	seat := ""
	for _, c := range arr(t, r.json(t)["party"], "party") {
		if pc := obj(t, c, "character"); pc["player_id"] == w.otherID {
			seat = pc["seat"].(string)
		}
	}
	if r := e.do("DELETE", "/api/admin/tables/"+w.pub+"/seats/"+seat, nil, testAdminToken); r.status != http.StatusNoContent {
		t.Fatalf("free seat: %d %s", r.status, r.body)
	}
	if code, reason := closeOf(t, conn); code != 4003 || reason != "removed by the operator" {
		t.Errorf("close = %d %q, want 4003 %q", code, reason, "removed by the operator")
	}
	f := watch.until("player_left", func(f wsFrame) bool { return f.Type == "event" && f.Kind == "player_left" })
	if f.Data["by"] != "operator" || f.Data["player_id"] != w.otherID || f.Data["role"] != "player" {
		t.Errorf("player_left = %s", f.raw)
	}
}

// The adventures' list and entries.
func TestAdventuresContractShapes(t *testing.T) {
	w := newBadWorld(t)
	e := w.e
	entry := shape{keys: map[string]string{"id": "string", "title": "string", "summary": "string", "author?": "string", "built_in": "bool", "tables": "number"},
		extra: []string{"author_id", "forked_from"}}
	r := e.do("GET", "/api/adventures", nil, "")
	list := arr(t, r.json(t)["adventures"], "adventures")
	seenBuiltIn, seenOwn := false, false
	for i, a := range list {
		m := obj(t, a, "adventure")
		entry.check(t, "adventure "+jsonInt(int64(i)), m)
		if m["built_in"] == true {
			if seenOwn {
				t.Errorf("built-in %v listed after a player's", m["id"])
			}
			seenBuiltIn = true
		} else {
			seenOwn = true
			if m["author"] != "Member" {
				t.Errorf("author = %v", m["author"])
			}
		}
	}
	if !seenBuiltIn || !seenOwn {
		t.Errorf("adventures = %s", r.body)
	}
	r = e.do("GET", "/api/adventures/"+w.adv, nil, "")
	one := r.json(t)
	entry.plus(map[string]string{"source": "string"}).check(t, "adventure", one)
	r = e.do("POST", "/api/adventures/"+w.adv+"/fork", nil, w.other)
	if r.status != http.StatusCreated {
		t.Fatalf("fork: %d %s", r.status, r.body)
	}
	fork := r.json(t)
	entry.plus(map[string]string{"source?": "string"}).check(t, "fork", fork)
	if fork["author"] != "Other" || fork["id"] == w.adv {
		t.Errorf("fork = %s", r.body)
	}
}
