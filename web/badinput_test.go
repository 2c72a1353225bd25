package web_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"tavern/web"
)

// Bad input on every route of PROTOCOL.md's owners', notes', adventures'
// and operator's sections: each request is refused with a 4xx and the
// protocol's error body, and changes nothing anyone can read afterwards
// (badWorld.fingerprint).

// badWorld is the server the bad requests are sent to: a private and a
// public table of one owner, a member seated at both, another player
// seated at the public one, a stranger, a note, an adventure, and console
// users of each role.
type badWorld struct {
	e                              *testEnv
	owner, member, other, stranger string
	otherID, strangerID            string
	priv, pub, idle                string
	invite, note, adv              string
	viewer, moderator              string
	narration, nonNarration        int64
}

func newBadWorld(t *testing.T) *badWorld {
	e := startEnv(t, envConfig{quotas: web.Quotas{Off: true}})
	w := &badWorld{e: e}
	_, w.owner = e.newPlayer("Owner")
	memberID, member := e.newPlayer("Member")
	w.member = member
	w.otherID, w.other = e.newPlayer("Other")
	w.strangerID, w.stranger = e.newPlayer("Stranger")
	mk := func(body map[string]any) string {
		r := e.do("POST", "/api/tables", body, w.owner)
		if r.status != http.StatusCreated {
			t.Fatalf("create table: %d %s", r.status, r.body)
		}
		return r.json(t)["id"].(string)
	}
	w.priv = mk(map[string]any{"name": "Hidden", "private": true})
	w.pub = mk(map[string]any{"name": "Open"})
	w.idle = mk(map[string]any{"name": "Idle"})
	r := e.do("POST", "/api/tables/"+w.priv+"/invite", nil, w.owner)
	if r.status != http.StatusCreated {
		t.Fatalf("invite: %d %s", r.status, r.body)
	}
	w.invite = r.json(t)["code"].(string)
	sit := func(table, token, name, invite string) {
		body := map[string]any{"character": map[string]any{"name": name, "class": "warrior"}}
		if invite != "" {
			body["invite"] = invite
		}
		r := e.do("POST", "/api/tables/"+table+"/seats", body, token)
		if r.status != http.StatusCreated {
			t.Fatalf("sit at %s: %d %s", table, r.status, r.body)
		}
	}
	sit(w.priv, member, "Mira", w.invite)
	e.arrive(w.priv, memberID)
	sit(w.pub, member, "Mira", "")
	e.arrive(w.pub, memberID)
	sit(w.pub, w.other, "Otto", "")
	e.arrive(w.pub, w.otherID)
	r = e.do("POST", "/api/tables/"+w.pub+"/notes", map[string]any{"text": "The miller owes the party a favour."}, member)
	if r.status != http.StatusCreated {
		t.Fatalf("note: %d %s", r.status, r.body)
	}
	w.note = r.json(t)["id"].(string)
	r = e.yaml("POST", "/api/adventures", starter(t), member)
	if r.status != http.StatusCreated {
		t.Fatalf("adventure: %d %s", r.status, r.body)
	}
	w.adv = r.json(t)["id"].(string)
	for _, role := range []string{"viewer", "moderator"} {
		r := e.do("POST", "/api/admin/users", map[string]any{"name": role, "role": role}, testAdminToken)
		if r.status != http.StatusCreated {
			t.Fatalf("console user: %d %s", r.status, r.body)
		}
		if role == "viewer" {
			w.viewer = r.json(t)["token"].(string)
		} else {
			w.moderator = r.json(t)["token"].(string)
		}
	}
	// A narration and an event that is not one, at the public table.
	r = e.do("GET", "/api/tables/"+w.pub+"/events?since=0", nil, w.owner)
	var evs struct {
		Events []struct {
			Seq  int64  `json:"seq"`
			Kind string `json:"kind"`
		} `json:"events"`
	}
	if err := json.Unmarshal(r.body, &evs); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Events {
		switch {
		case ev.Kind == "narration" && w.narration == 0:
			w.narration = ev.Seq
		case ev.Kind != "narration" && w.nonNarration == 0:
			w.nonNarration = ev.Seq
		}
	}
	if w.narration == 0 || w.nonNarration == 0 {
		t.Fatalf("events of the public table: %s", r.body)
	}
	return w
}

// volatile are the fields of the operator's table rows that move without
// anyone changing the table.
var volatile = []string{"connections", "spectators", "busy", "stale", "loaded"}

// fingerprint is everything a bad request could have changed, by what
// reads it: each table's log and notes, the operator's table rows, the
// adventures, console users, players, budgets and conversations, and
// whether the private table's invite still lets a stranger in.
func (w *badWorld) fingerprint(t *testing.T) map[string]string {
	t.Helper()
	e := w.e
	fp := map[string]string{}
	get := func(key, path, token string) {
		r := e.do("GET", path, nil, token)
		fp[key] = string(r.body)
		if r.status != http.StatusOK {
			fp[key] = http.StatusText(r.status) + " " + fp[key]
		}
	}
	for _, id := range []string{w.priv, w.pub, w.idle} {
		get("events "+id, "/api/tables/"+id+"/events?since=0&limit=500", w.owner)
		get("notes "+id, "/api/tables/"+id+"/notes", w.owner)
	}
	r := e.do("GET", "/api/admin/tables", nil, testAdminToken)
	var rows struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(r.body, &rows); err != nil {
		t.Fatalf("admin tables: %v %s", err, r.body)
	}
	sort.Slice(rows.Tables, func(i, j int) bool { return rows.Tables[i]["id"].(string) < rows.Tables[j]["id"].(string) })
	for _, row := range rows.Tables {
		for _, k := range volatile {
			delete(row, k)
		}
	}
	b, _ := json.Marshal(rows)
	fp["admin tables"] = string(b)
	get("adventures", "/api/adventures", "")
	get("adventure", "/api/adventures/"+w.adv, "")
	get("users", "/api/admin/users", testAdminToken)
	get("players", "/api/admin/players", testAdminToken)
	get("budgets", "/api/admin/budgets", testAdminToken)
	get("ask", "/api/admin/ask", testAdminToken)
	get("member's tables", "/api/players/me/tables", w.member)
	get("invite", "/api/tables/"+w.priv+"?invite="+w.invite, w.stranger)
	fp["invite"] = fp["invite"][:min(len(fp["invite"]), 12)] // the status, not the snapshot
	return fp
}

// badCase is one refused request.
type badCase struct {
	name         string
	method, path string
	body         string // sent as is
	ctype        string // default application/json when there is a body
	token        string
	status       int
	code         string
	problems     bool // an adventure's 400: the error body also lists problems
}

func (w *badWorld) run(t *testing.T, cases []badCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := w.fingerprint(t)
			var hdr []string
			if c.body != "" {
				ct := c.ctype
				if ct == "" {
					ct = "application/json"
				}
				hdr = []string{"Content-Type", ct}
			}
			var body any
			if c.body != "" {
				body = c.body
			}
			r := w.e.do(c.method, c.path, body, c.token, hdr...)
			if c.problems {
				wantProblems(t, r)
			} else {
				wantError(t, r, c.status, c.code)
			}
			after := w.fingerprint(t)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s %s changed %s:\nbefore %s\nafter  %s", c.method, c.path, k, v, after[k])
				}
			}
		})
	}
}

// wantProblems checks r is an adventure's 400: bad_request with a message
// and at least one problem with a path or a line.
func wantProblems(t *testing.T, r response) {
	t.Helper()
	var b struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			Problems []struct {
				Line    int    `json:"line"`
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"problems"`
		} `json:"error"`
	}
	if r.status != http.StatusBadRequest {
		t.Errorf("status = %d, want 400 (body %.300s)", r.status, r.body)
	}
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatalf("error body %.300s: %v", r.body, err)
	}
	if b.Error.Code != "bad_request" || b.Error.Message == "" || len(b.Error.Problems) == 0 || b.Error.Problems[0].Message == "" {
		t.Errorf("error body = %.300s, want bad_request with problems", r.body)
	}
}

func TestBadInputChangesNothing(t *testing.T) {
	w := newBadWorld(t)
	const (
		bad, notFound, forbidden, unauth, conflict, tooLarge = "bad_request", "not_found", "forbidden", "unauthorized", "conflict", "too_large"
	)
	huge := `{"text": "` + strings.Repeat("a", 70<<10) + `"}`
	long := func(n int) string { return strings.Repeat("b", n) }
	tbl := func(id, rest string) string { return "/api/tables/" + id + rest }
	seq := func(id string, n int64, rest string) string {
		return tbl(id, "/events/"+jsonInt(n)+rest)
	}
	cases := []badCase{
		// Creating a table with the owner's settings.
		{name: "create private not bool", method: "POST", path: "/api/tables", body: `{"name":"X","private":"yes"}`, token: w.owner, status: 400, code: bad},
		{name: "create npc_hp unknown", method: "POST", path: "/api/tables", body: `{"name":"X","npc_hp":"numbers"}`, token: w.owner, status: 400, code: bad},
		{name: "create unknown field", method: "POST", path: "/api/tables", body: `{"name":"X","owner_id":"p_1"}`, token: w.owner, status: 400, code: bad},
		{name: "create malformed", method: "POST", path: "/api/tables", body: `{"name":`, token: w.owner, status: 400, code: bad},
		{name: "create unknown adventure", method: "POST", path: "/api/tables", body: `{"name":"X","adventure":"no-such-adventure"}`, token: w.owner, status: 400, code: bad},

		// Invites.
		{name: "invite anonymous", method: "POST", path: tbl(w.priv, "/invite"), status: 401, code: unauth},
		{name: "invite stranger private", method: "POST", path: tbl(w.priv, "/invite"), token: w.stranger, status: 404, code: notFound},
		{name: "invite member", method: "POST", path: tbl(w.priv, "/invite"), token: w.member, status: 403, code: forbidden},
		{name: "invite non-owner public", method: "POST", path: tbl(w.pub, "/invite"), token: w.stranger, status: 403, code: forbidden},
		{name: "invite unknown table", method: "POST", path: tbl("t-nope", "/invite"), token: w.owner, status: 404, code: notFound},

		// Joining: the seat request with an invite.
		{name: "join old or wrong invite", method: "POST", path: tbl(w.priv, "/seats"), body: `{"character":{"name":"Sly"},"invite":"not-the-code"}`, token: w.stranger, status: 404, code: notFound},
		{name: "join invite not string", method: "POST", path: tbl(w.priv, "/seats"), body: `{"character":{"name":"Sly"},"invite":42}`, token: w.stranger, status: 400, code: bad},
		{name: "join unknown field", method: "POST", path: tbl(w.priv, "/seats"), body: `{"character":{"name":"Sly"},"invite":"` + w.invite + `","seat":"1"}`, token: w.stranger, status: 400, code: bad},
		{name: "join twice", method: "POST", path: tbl(w.priv, "/seats"), body: `{"character":{"name":"Again"},"invite":"` + w.invite + `"}`, token: w.member, status: 409, code: conflict},
		{name: "join character missing", method: "POST", path: tbl(w.priv, "/seats"), body: `{"invite":"` + w.invite + `"}`, token: w.stranger, status: 400, code: bad},

		// PATCH settings.
		{name: "patch malformed", method: "PATCH", path: tbl(w.pub, ""), body: `{"name": "A"`, token: w.owner, status: 400, code: bad},
		{name: "patch empty", method: "PATCH", path: tbl(w.pub, ""), body: `{}`, token: w.owner, status: 400, code: bad},
		{name: "patch private not bool", method: "PATCH", path: tbl(w.pub, ""), body: `{"private":1}`, token: w.owner, status: 400, code: bad},
		{name: "patch timeout not int", method: "PATCH", path: tbl(w.pub, ""), body: `{"turn_timeout_s":"60"}`, token: w.owner, status: 400, code: bad},
		{name: "patch timeout negative", method: "PATCH", path: tbl(w.pub, ""), body: `{"turn_timeout_s":-1}`, token: w.owner, status: 400, code: bad},
		{name: "patch npc_hp unknown", method: "PATCH", path: tbl(w.pub, ""), body: `{"npc_hp":"roman"}`, token: w.owner, status: 400, code: bad},
		{name: "patch name empty", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"  "}`, token: w.owner, status: 400, code: bad},
		{name: "patch name too long", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"` + long(200) + `"}`, token: w.owner, status: 400, code: bad},
		{name: "patch unknown field", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"B","owner_id":"p_x"}`, token: w.owner, status: 400, code: bad},
		{name: "patch two values", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"B"}{"name":"C"}`, token: w.owner, status: 400, code: bad},
		{name: "patch oversized", method: "PATCH", path: tbl(w.pub, ""), body: huge, token: w.owner, status: 413, code: tooLarge},
		{name: "patch wrong content type", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"B"}`, ctype: "text/plain", token: w.owner, status: 400, code: bad},
		{name: "patch member", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"Mine"}`, token: w.member, status: 403, code: forbidden},
		{name: "patch stranger private", method: "PATCH", path: tbl(w.priv, ""), body: `{"name":"Mine"}`, token: w.stranger, status: 404, code: notFound},
		{name: "patch unknown table", method: "PATCH", path: tbl("t-nope", ""), body: `{"name":"Mine"}`, token: w.owner, status: 404, code: notFound},
		{name: "patch anonymous", method: "PATCH", path: tbl(w.pub, ""), body: `{"name":"Mine"}`, status: 401, code: unauth},

		// Kick.
		{name: "kick another seat as member", method: "DELETE", path: tbl(w.pub, "/seats/2"), token: w.member, status: 403, code: forbidden},
		{name: "kick stranger private", method: "DELETE", path: tbl(w.priv, "/seats/1"), token: w.stranger, status: 404, code: notFound},
		{name: "kick stranger public", method: "DELETE", path: tbl(w.pub, "/seats/1"), token: w.stranger, status: 403, code: forbidden},
		{name: "kick empty seat", method: "DELETE", path: tbl(w.pub, "/seats/4"), token: w.owner, status: 404, code: notFound},
		{name: "kick junk seat", method: "DELETE", path: tbl(w.pub, "/seats/"+long(100)), token: w.owner, status: 404, code: notFound},
		{name: "kick unknown table", method: "DELETE", path: tbl("t-nope", "/seats/1"), token: w.owner, status: 404, code: notFound},

		// Bans.
		{name: "ban malformed", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":`, token: w.owner, status: 400, code: bad},
		{name: "ban wrong type", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":7}`, token: w.owner, status: 400, code: bad},
		{name: "ban empty", method: "POST", path: tbl(w.pub, "/bans"), body: `{}`, token: w.owner, status: 400, code: bad},
		{name: "ban junk id", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":"../../x"}`, token: w.owner, status: 400, code: bad},
		{name: "ban unknown field", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":"` + w.otherID + `","reason":"x"}`, token: w.owner, status: 400, code: bad},
		{name: "ban unknown player", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":"p_0000000000000000"}`, token: w.owner, status: 404, code: notFound},
		{name: "ban as member", method: "POST", path: tbl(w.pub, "/bans"), body: `{"player_id":"` + w.otherID + `"}`, token: w.member, status: 403, code: forbidden},
		{name: "ban stranger private", method: "POST", path: tbl(w.priv, "/bans"), body: `{"player_id":"` + w.otherID + `"}`, token: w.stranger, status: 404, code: notFound},
		{name: "ban oversized", method: "POST", path: tbl(w.pub, "/bans"), body: huge, token: w.owner, status: 413, code: tooLarge},
		{name: "unban not banned", method: "DELETE", path: tbl(w.pub, "/bans/"+w.otherID), token: w.owner, status: 404, code: notFound},
		{name: "unban as member", method: "DELETE", path: tbl(w.pub, "/bans/"+w.otherID), token: w.member, status: 403, code: forbidden},
		{name: "unban stranger private", method: "DELETE", path: tbl(w.priv, "/bans/"+w.otherID), token: w.stranger, status: 404, code: notFound},

		// The owner's pause.
		{name: "pause as member", method: "POST", path: tbl(w.pub, "/pause"), token: w.member, status: 403, code: forbidden},
		{name: "pause stranger private", method: "POST", path: tbl(w.priv, "/pause"), token: w.stranger, status: 404, code: notFound},
		{name: "resume as member", method: "POST", path: tbl(w.pub, "/resume"), token: w.member, status: 403, code: forbidden},
		{name: "pause unknown table", method: "POST", path: tbl("t-nope", "/pause"), token: w.owner, status: 404, code: notFound},
		{name: "pause anonymous", method: "POST", path: tbl(w.pub, "/pause"), status: 401, code: unauth},
		{name: "my tables anonymous", method: "GET", path: "/api/players/me/tables", status: 401, code: unauth},

		// Retcon.
		{name: "retcon then unknown", method: "POST", path: tbl(w.pub, "/retcon"), body: `{"then":"redo"}`, token: w.owner, status: 400, code: bad},
		{name: "retcon then missing", method: "POST", path: tbl(w.pub, "/retcon"), body: `{}`, token: w.owner, status: 400, code: bad},
		{name: "retcon then not string", method: "POST", path: tbl(w.pub, "/retcon"), body: `{"then":1}`, token: w.owner, status: 400, code: bad},
		{name: "retcon malformed", method: "POST", path: tbl(w.pub, "/retcon"), body: `[`, token: w.owner, status: 400, code: bad},
		{name: "retcon unknown field", method: "POST", path: tbl(w.pub, "/retcon"), body: `{"then":"drop","turns":2}`, token: w.owner, status: 400, code: bad},
		{name: "retcon as member", method: "POST", path: tbl(w.pub, "/retcon"), body: `{"then":"drop"}`, token: w.member, status: 403, code: forbidden},
		{name: "retcon stranger private", method: "POST", path: tbl(w.priv, "/retcon"), body: `{"then":"drop"}`, token: w.stranger, status: 404, code: notFound},
		{name: "retcon nothing to undo", method: "POST", path: tbl(w.idle, "/retcon"), body: `{"then":"drop"}`, token: w.owner, status: 409, code: conflict},
		{name: "retcon oversized", method: "POST", path: tbl(w.pub, "/retcon"), body: huge, token: w.owner, status: 413, code: tooLarge},

		// Notes.
		{name: "note empty", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":""}`, token: w.member, status: 400, code: bad},
		{name: "note blank", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"   "}`, token: w.member, status: 400, code: bad},
		{name: "note too long", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"` + long(501) + `"}`, token: w.member, status: 400, code: bad},
		{name: "note not string", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":["a"]}`, token: w.member, status: 400, code: bad},
		{name: "note unknown field", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"a","by":"x"}`, token: w.member, status: 400, code: bad},
		{name: "note control character", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"a\u0007b"}`, token: w.member, status: 400, code: bad},
		{name: "note oversized", method: "POST", path: tbl(w.pub, "/notes"), body: huge, token: w.member, status: 413, code: tooLarge},
		{name: "note stranger public", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"mine"}`, token: w.stranger, status: 403, code: forbidden},
		{name: "note stranger private", method: "POST", path: tbl(w.priv, "/notes"), body: `{"text":"mine"}`, token: w.stranger, status: 404, code: notFound},
		{name: "note anonymous", method: "POST", path: tbl(w.pub, "/notes"), body: `{"text":"mine"}`, status: 401, code: unauth},
		{name: "notes of unknown table", method: "GET", path: tbl("t-nope", "/notes"), status: 404, code: notFound},
		{name: "note remove unknown", method: "DELETE", path: tbl(w.pub, "/notes/n-nope"), token: w.owner, status: 404, code: notFound},
		{name: "note remove junk id", method: "DELETE", path: tbl(w.pub, "/notes/"+long(100)), token: w.owner, status: 404, code: notFound},
		{name: "note remove not author", method: "DELETE", path: tbl(w.pub, "/notes/"+w.note), token: w.other, status: 403, code: forbidden},
		{name: "note remove stranger private", method: "DELETE", path: tbl(w.priv, "/notes/"+w.note), token: w.stranger, status: 404, code: notFound},

		// Narration edits.
		{name: "edit empty", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: `{"text":""}`, token: w.owner, status: 400, code: bad},
		{name: "edit too long", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: `{"text":"` + long(4001) + `"}`, token: w.owner, status: 400, code: bad},
		{name: "edit not string", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: `{"text":1}`, token: w.owner, status: 400, code: bad},
		{name: "edit unknown field", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: `{"text":"x","seq":1}`, token: w.owner, status: 400, code: bad},
		{name: "edit not a narration", method: "POST", path: seq(w.pub, w.nonNarration, "/edit"), body: `{"text":"x"}`, token: w.owner, status: 400, code: bad},
		{name: "edit unknown seq", method: "POST", path: seq(w.pub, 9999, "/edit"), body: `{"text":"x"}`, token: w.owner, status: 404, code: notFound},
		{name: "edit junk seq", method: "POST", path: tbl(w.pub, "/events/abc/edit"), body: `{"text":"x"}`, token: w.owner, status: 404, code: notFound},
		{name: "edit zero seq", method: "POST", path: tbl(w.pub, "/events/0/edit"), body: `{"text":"x"}`, token: w.owner, status: 404, code: notFound},
		{name: "edit as member", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: `{"text":"x"}`, token: w.member, status: 403, code: forbidden},
		{name: "edit stranger private", method: "POST", path: seq(w.priv, 1, "/edit"), body: `{"text":"x"}`, token: w.stranger, status: 404, code: notFound},
		{name: "edit oversized", method: "POST", path: seq(w.pub, w.narration, "/edit"), body: huge, token: w.owner, status: 413, code: tooLarge},

		// Feedback.
		{name: "feedback score 2", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":2}`, token: w.member, status: 400, code: bad},
		{name: "feedback score 0", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":0}`, token: w.member, status: 400, code: bad},
		{name: "feedback score missing", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"comment":"meh"}`, token: w.member, status: 400, code: bad},
		{name: "feedback score string", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":"1"}`, token: w.member, status: 400, code: bad},
		{name: "feedback score fraction", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":0.5}`, token: w.member, status: 400, code: bad},
		{name: "feedback comment too long", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":1,"comment":"` + long(2000) + `"}`, token: w.member, status: 400, code: bad},
		{name: "feedback unknown field", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":1,"stars":5}`, token: w.member, status: 400, code: bad},
		{name: "feedback not a narration", method: "POST", path: seq(w.pub, w.nonNarration, "/feedback"), body: `{"score":1}`, token: w.member, status: 400, code: bad},
		{name: "feedback unknown seq", method: "POST", path: seq(w.pub, 9999, "/feedback"), body: `{"score":1}`, token: w.member, status: 404, code: notFound},
		{name: "feedback not seated", method: "POST", path: seq(w.pub, w.narration, "/feedback"), body: `{"score":1}`, token: w.stranger, status: 403, code: forbidden},
		{name: "feedback stranger private", method: "POST", path: seq(w.priv, 1, "/feedback"), body: `{"score":1}`, token: w.stranger, status: 404, code: notFound},

		// Adventures.
		{name: "adventure upload not yaml type", method: "POST", path: "/api/adventures", body: `{"id":"x"}`, token: w.member, status: 400, code: bad},
		{name: "adventure upload broken yaml", method: "POST", path: "/api/adventures", body: "title: [unclosed\n", ctype: "application/yaml", token: w.member, problems: true},
		{name: "adventure upload empty", method: "POST", path: "/api/adventures", body: "\n", ctype: "application/yaml", token: w.member, problems: true},
		{name: "adventure upload oversized", method: "POST", path: "/api/adventures", body: "# " + long(300<<10) + "\n", ctype: "application/yaml", token: w.member, problems: true},
		{name: "adventure upload anonymous", method: "POST", path: "/api/adventures", body: "title: x\n", ctype: "application/yaml", status: 401, code: unauth},
		{name: "adventure replace not author", method: "PUT", path: "/api/adventures/" + w.adv, body: starter(t), ctype: "application/yaml", token: w.other, status: 403, code: forbidden},
		{name: "adventure replace built-in", method: "PUT", path: "/api/adventures/greyhollow", body: starter(t), ctype: "application/yaml", token: w.member, status: 403, code: forbidden},
		{name: "adventure replace unknown", method: "PUT", path: "/api/adventures/no-such-one", body: starter(t), ctype: "application/yaml", token: w.member, status: 404, code: notFound},
		{name: "adventure replace broken", method: "PUT", path: "/api/adventures/" + w.adv, body: "locations: 3\n", ctype: "application/yaml", token: w.member, problems: true},
		{name: "adventure hide not author", method: "DELETE", path: "/api/adventures/" + w.adv, token: w.other, status: 403, code: forbidden},
		{name: "adventure hide built-in", method: "DELETE", path: "/api/adventures/greyhollow", token: w.member, status: 403, code: forbidden},
		{name: "adventure hide unknown", method: "DELETE", path: "/api/adventures/no-such-one", token: w.member, status: 404, code: notFound},
		{name: "adventure fork unknown", method: "POST", path: "/api/adventures/no-such-one/fork", token: w.member, status: 404, code: notFound},
		{name: "adventure fork anonymous", method: "POST", path: "/api/adventures/" + w.adv + "/fork", status: 401, code: unauth},
		{name: "adventure get unknown", method: "GET", path: "/api/adventures/" + long(300), status: 404, code: notFound},
		{name: "adventure validate not yaml type", method: "POST", path: "/api/adventures/validate", body: `{}`, status: 400, code: bad},

		// Budgets.
		{name: "budget negative", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":-1}`, token: testAdminToken, status: 400, code: bad},
		{name: "budget not number", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":"5"}`, token: testAdminToken, status: 400, code: bad},
		{name: "budget missing", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{}`, token: testAdminToken, status: 400, code: bad},
		{name: "budget huge", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":1e300}`, token: testAdminToken, status: 400, code: bad},
		{name: "budget unknown field", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":5,"usd":5}`, token: testAdminToken, status: 400, code: bad},
		{name: "budget unknown table", method: "PUT", path: "/api/admin/tables/t-nope/budget", body: `{"usd_per_day":5}`, token: testAdminToken, status: 404, code: notFound},
		{name: "budget viewer", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":5}`, token: w.viewer, status: 403, code: forbidden},
		{name: "budget player", method: "PUT", path: "/api/admin/tables/" + w.pub + "/budget", body: `{"usd_per_day":5}`, token: w.owner, status: 401, code: unauth},

		// Console users.
		{name: "user role unknown", method: "POST", path: "/api/admin/users", body: `{"name":"x","role":"root"}`, token: testAdminToken, status: 400, code: bad},
		{name: "user name empty", method: "POST", path: "/api/admin/users", body: `{"name":"","role":"viewer"}`, token: testAdminToken, status: 400, code: bad},
		{name: "user name not string", method: "POST", path: "/api/admin/users", body: `{"name":1,"role":"viewer"}`, token: testAdminToken, status: 400, code: bad},
		{name: "user unknown field", method: "POST", path: "/api/admin/users", body: `{"name":"x","role":"viewer","token":"t"}`, token: testAdminToken, status: 400, code: bad},
		{name: "user as moderator", method: "POST", path: "/api/admin/users", body: `{"name":"x","role":"viewer"}`, token: w.moderator, status: 403, code: forbidden},
		{name: "user as viewer", method: "POST", path: "/api/admin/users", body: `{"name":"x","role":"viewer"}`, token: w.viewer, status: 403, code: forbidden},
		{name: "user revoke unknown", method: "DELETE", path: "/api/admin/users/u-nope", token: testAdminToken, status: 404, code: notFound},
		{name: "user revoke as moderator", method: "DELETE", path: "/api/admin/users/u-nope", token: w.moderator, status: 403, code: forbidden},

		// The operator's players.
		{name: "player ban unknown", method: "POST", path: "/api/admin/players/p_0000000000000000/ban", token: testAdminToken, status: 404, code: notFound},
		{name: "player ban malformed", method: "POST", path: "/api/admin/players/" + w.otherID + "/ban", body: `{"reason":`, token: testAdminToken, status: 400, code: bad},
		{name: "player ban reason too long", method: "POST", path: "/api/admin/players/" + w.otherID + "/ban", body: `{"reason":"` + long(501) + `"}`, token: testAdminToken, status: 400, code: bad},
		{name: "player ban unknown field", method: "POST", path: "/api/admin/players/" + w.otherID + "/ban", body: `{"why":"x"}`, token: testAdminToken, status: 400, code: bad},
		{name: "player ban viewer", method: "POST", path: "/api/admin/players/" + w.otherID + "/ban", token: w.viewer, status: 403, code: forbidden},
		{name: "player unban unknown", method: "DELETE", path: "/api/admin/players/p_0000000000000000/ban", token: testAdminToken, status: 404, code: notFound},
		{name: "player erase unknown", method: "DELETE", path: "/api/admin/players/p_0000000000000000", token: testAdminToken, status: 404, code: notFound},
		{name: "player erase viewer", method: "DELETE", path: "/api/admin/players/" + w.otherID, token: w.viewer, status: 403, code: forbidden},
		{name: "player erase player", method: "DELETE", path: "/api/admin/players/" + w.otherID, token: w.owner, status: 401, code: unauth},
		{name: "player export unknown", method: "GET", path: "/api/admin/players/p_0000000000000000/export", token: testAdminToken, status: 404, code: notFound},
		{name: "player export junk", method: "GET", path: "/api/admin/players/" + long(100) + "/export", token: testAdminToken, status: 404, code: notFound},

		// The operator's moderation, by a viewer.
		{name: "moderation pause viewer", method: "POST", path: "/api/admin/tables/" + w.pub + "/pause", token: w.viewer, status: 403, code: forbidden},
		{name: "moderation end-combat viewer", method: "POST", path: "/api/admin/tables/" + w.pub + "/end-combat", token: w.viewer, status: 403, code: forbidden},
		{name: "moderation free seat viewer", method: "DELETE", path: "/api/admin/tables/" + w.pub + "/seats/1", token: w.viewer, status: 403, code: forbidden},
		{name: "moderation close viewer", method: "DELETE", path: "/api/admin/tables/" + w.pub, token: w.viewer, status: 403, code: forbidden},
		{name: "moderation free empty seat", method: "DELETE", path: "/api/admin/tables/" + w.pub + "/seats/4", token: w.moderator, status: 404, code: notFound},
		{name: "moderation pause unknown table", method: "POST", path: "/api/admin/tables/t-nope/pause", token: w.moderator, status: 404, code: notFound},

		// Ask.
		{name: "ask empty", method: "POST", path: "/api/admin/ask", body: `{"question":""}`, token: testAdminToken, status: 400, code: bad},
		{name: "ask too long", method: "POST", path: "/api/admin/ask", body: `{"question":"` + long(2001) + `"}`, token: testAdminToken, status: 400, code: bad},
		{name: "ask not string", method: "POST", path: "/api/admin/ask", body: `{"question":5}`, token: testAdminToken, status: 400, code: bad},
		{name: "ask malformed", method: "POST", path: "/api/admin/ask", body: `{"question":"x"`, token: testAdminToken, status: 400, code: bad},
		{name: "ask unknown conversation", method: "POST", path: "/api/admin/ask", body: `{"question":"how many tables?","conversation":"c-nope"}`, token: testAdminToken, status: 404, code: notFound},
		{name: "ask viewer", method: "POST", path: "/api/admin/ask", body: `{"question":"how many tables?"}`, token: w.viewer, status: 403, code: forbidden},
		{name: "ask player", method: "POST", path: "/api/admin/ask", body: `{"question":"how many tables?"}`, token: w.owner, status: 401, code: unauth},
		{name: "ask get unknown", method: "GET", path: "/api/admin/ask/c-nope", token: testAdminToken, status: 404, code: notFound},
	}
	w.run(t, cases)
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Bad frames on the websocket: each is answered with an error frame of
// the protocol's code, echoing the id when it could be read, the socket
// stays open, and nothing is logged or queued: after them the owner can
// still queue exactly as many whispers as a table holds.
func TestBadFramesChangeNothing(t *testing.T) {
	w := newBadWorld(t)
	owner := w.e.ws(w.pub, "spectator", w.owner)
	member := w.e.ws(w.pub, "player", w.member)
	watcher := w.e.ws(w.pub, "spectator", w.stranger)
	long := func(n int) string { return strings.Repeat("c", n) }
	cases := []struct {
		name  string
		conn  *wsConn
		frame string
		id    string // the error frame's id ("" when it cannot be read)
		code  string
	}{
		{"not json", member, `{"type": "act", "id": "a1", "text": `, "", "bad_request"},
		{"not an object", member, `["act"]`, "", "bad_request"},
		{"unknown type", member, `{"type": "shout", "id": "a2", "text": "hi"}`, "a2", "bad_request"},
		{"text not a string", member, `{"type": "act", "id": "a3", "text": 5}`, "", "bad_request"},
		{"id too long", member, `{"type": "act", "id": "` + long(65) + `", "text": "hi"}`, "", "bad_request"},
		{"act without id", member, `{"type": "act", "text": "I look around."}`, "", "bad_request"},
		{"act empty", member, `{"type": "act", "id": "a4", "text": ""}`, "a4", "bad_request"},
		{"act too long", member, `{"type": "act", "id": "a5", "text": "` + long(2001) + `"}`, "a5", "bad_request"},
		{"ability act too long", member, `{"type": "act", "id": "a6", "text": "I cast firebolt at ` + long(2000) + `"}`, "a6", "bad_request"},
		{"say too long", member, `{"type": "say", "id": "a7", "text": "` + long(501) + `"}`, "a7", "bad_request"},
		{"act by a spectator", watcher, `{"type": "act", "id": "a8", "text": "we take a short rest"}`, "a8", "forbidden"},
		{"whisper by a player", member, `{"type": "whisper", "id": "w1", "text": "make it easy"}`, "w1", "forbidden"},
		{"whisper by a spectator", watcher, `{"type": "whisper", "id": "w2", "text": "make it easy"}`, "w2", "forbidden"},
		{"whisper without id", owner, `{"type": "whisper", "text": "make it easy"}`, "", "bad_request"},
		{"whisper empty", owner, `{"type": "whisper", "id": "w3", "text": " "}`, "w3", "bad_request"},
		{"whisper too long", owner, `{"type": "whisper", "id": "w4", "text": "` + long(1001) + `"}`, "w4", "bad_request"},
		{"whisper control character", owner, `{"type": "whisper", "id": "w5", "text": "a\u0000b"}`, "w5", "bad_request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := w.fingerprint(t)
			if err := c.conn.c.Write(t.Context(), websocket.MessageText, []byte(c.frame)); err != nil {
				t.Fatal(err)
			}
			f := c.conn.until("error frame", func(f wsFrame) bool { return f.Type == "error" || f.Type == "ack" })
			if f.Type != "error" || f.Code != c.code || f.ID != c.id || f.Message == "" {
				t.Errorf("answer = %s, want an error %s with id %q", f.raw, c.code, c.id)
			}
			// The socket is still open: a ping is answered.
			c.conn.send(map[string]string{"type": "ping", "id": "p-" + c.name})
			c.conn.until("pong", func(f wsFrame) bool { return f.Type == "pong" && f.ID == "p-"+c.name })
			after := w.fingerprint(t)
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed %s:\nbefore %s\nafter  %s", c.name, k, v, after[k])
				}
			}
		})
	}
	// None of the refused whispers was queued: five wait at most.
	for i := range 6 {
		id := "ok" + jsonInt(int64(i))
		owner.send(map[string]string{"type": "whisper", "id": id, "text": "The miller lies."})
		f := owner.until("whisper answer", func(f wsFrame) bool { return (f.Type == "ack" || f.Type == "error") && f.ID == id })
		want := "ack"
		if i == 5 {
			want = "error"
		}
		if f.Type != want {
			t.Errorf("whisper %d: %s, want %s", i+1, f.raw, want)
		}
	}
}

// A table holds 30 notes: the 31st is refused 409 and stored nowhere.
func TestNoteOverTheLimitChangesNothing(t *testing.T) {
	w := newBadWorld(t)
	for i := range 30 {
		r := w.e.do("POST", "/api/tables/"+w.idle+"/notes", map[string]any{"text": "Fact " + jsonInt(int64(i))}, w.owner)
		if r.status != http.StatusCreated {
			t.Fatalf("note %d: %d %s", i+1, r.status, r.body)
		}
	}
	w.run(t, []badCase{{name: "31st note", method: "POST", path: "/api/tables/" + w.idle + "/notes",
		body: `{"text":"One too many."}`, token: w.owner, status: http.StatusConflict, code: "conflict"}})
}
