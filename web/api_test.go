package web_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/web"
)

func TestCreatePlayer(t *testing.T) {
	e := newTestEnv(t)
	r := e.do("POST", "/api/players", map[string]any{"name": "  Aldric  "}, "")
	if r.status != http.StatusCreated {
		t.Fatalf("status = %d, want 201; body %s", r.status, r.body)
	}
	m := r.json(t)
	if m["name"] != "Aldric" {
		t.Errorf("name = %v, want the trimmed Aldric", m["name"])
	}
	id, _ := m["player_id"].(string)
	token, _ := m["token"].(string)
	if id == "" || token == "" {
		t.Fatalf("want player_id and token, got %s", r.body)
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) < 16 {
		t.Errorf("token %q: want at least 128 random bits (err %v)", token, err)
	}

	// The cookie carries the token, HttpOnly, SameSite=Lax, Path=/.
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("Set-Cookie: got %d cookies, want 1", len(cookies))
	}
	c := cookies[0]
	if c.Name != "tavern_player" || c.Value != token || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Errorf("cookie = %+v, want tavern_player=<token>; HttpOnly; SameSite=Lax; Path=/", c)
	}
	sc := r.header.Get("Set-Cookie")
	for _, want := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}

	// Only the hash is stored: the store got sha256(token), never the token.
	e.players.mu.Lock()
	hashes := e.players.hashes
	e.players.mu.Unlock()
	if len(hashes) != 1 {
		t.Fatalf("store got %d hashes, want 1", len(hashes))
	}
	want := sha256.Sum256([]byte(token))
	if !bytes.Equal(hashes[0], want[:]) {
		t.Errorf("stored hash = %x, want sha256(token) %x", hashes[0], want)
	}
	if bytes.Contains(hashes[0], []byte(token)) {
		t.Errorf("stored hash contains the token")
	}
	if _, err := e.store.PlayerByTokenHash(context.Background(), []byte(token)); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("lookup by the raw token: err = %v, want ENOTFOUND", err)
	}

	// The token authenticates, by bearer and by cookie.
	if r := e.do("GET", "/api/players/me", nil, token); r.status != 200 || r.json(t)["player_id"] != id {
		t.Errorf("GET /api/players/me with bearer: %d %s", r.status, r.body)
	}
	if r := e.do("GET", "/api/players/me", nil, "", "Cookie", "tavern_player="+token); r.status != 200 || r.json(t)["name"] != "Aldric" {
		t.Errorf("GET /api/players/me with cookie: %d %s", r.status, r.body)
	}
}

func TestCreatePlayerBadInput(t *testing.T) {
	e := newTestEnv(t)
	big := `{"name": "` + strings.Repeat("x", 70<<10) + `"}`
	for _, tc := range []struct {
		name   string
		body   string
		ctype  string
		status int
		code   string
	}{
		{"empty name", `{"name": ""}`, "", 400, "bad_request"},
		{"blank name", `{"name": "   "}`, "", 400, "bad_request"},
		{"33 characters", `{"name": "` + strings.Repeat("a", 33) + `"}`, "", 400, "bad_request"},
		{"control character", `{"name": "Al\u0007dric"}`, "", 400, "bad_request"},
		{"newline", `{"name": "Al\ndric"}`, "", 400, "bad_request"},
		{"invalid UTF-8", "{\"name\": \"Al\xffdric\"}", "", 400, "bad_request"},
		{"zero-width spaces only", `{"name": "\u200b\u200b\u2060"}`, "", 400, "bad_request"},
		{"bidi override", `{"name": "Ann\u202egnp"}`, "", 400, "bad_request"},
		{"lone surrogate", `{"name": "Ann\ud800"}`, "", 400, "bad_request"},
		{"lone low surrogate in a key", `{"n\udc00ame": "Ann"}`, "", 400, "bad_request"},
		{"zero-width space inside", `{"name": "Ann\u200bBell"}`, "", 400, "bad_request"},
		{"noncharacter", `{"name": "Ann\ufdd0"}`, "", 400, "bad_request"},
		{"noncharacter U+FFFE", `{"name": "Ann\ufffe"}`, "", 400, "bad_request"},
		{"missing name", `{}`, "", 400, "bad_request"},
		{"unknown field", `{"name": "Aldric", "admin": true}`, "", 400, "bad_request"},
		{"wrong type", `{"name": 42}`, "", 400, "bad_request"},
		{"not JSON", `name=Aldric`, "", 400, "bad_request"},
		{"two objects", `{"name": "A"} {"name": "B"}`, "", 400, "bad_request"},
		{"empty body", ``, "", 400, "bad_request"},
		{"form content type", `{"name": "Aldric"}`, "application/x-www-form-urlencoded", 400, "bad_request"},
		{"too large", big, "", 413, "too_large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hdr []string
			if tc.ctype != "" {
				hdr = []string{"Content-Type", tc.ctype}
			}
			r := e.do("POST", "/api/players", tc.body, "", hdr...)
			wantError(t, r, tc.status, tc.code)
			if r.header.Get("Set-Cookie") != "" {
				t.Errorf("a refused request set a cookie")
			}
		})
	}
	t.Run("32 multibyte characters", func(t *testing.T) {
		r := e.do("POST", "/api/players", map[string]any{"name": strings.Repeat("é", 32)}, "")
		if r.status != http.StatusCreated {
			t.Errorf("status = %d, want 201 (32 characters are allowed); %s", r.status, r.body)
		}
	})
	t.Run("no content type", func(t *testing.T) {
		r := e.do("POST", "/api/players", `{"name": "Bot"}`, "", "Content-Type", "")
		if r.status != http.StatusCreated {
			t.Errorf("status = %d, want 201 for an untyped JSON body; %s", r.status, r.body)
		}
	})
}

func TestAuthRequired(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "Auth"})
	for _, tc := range []struct {
		name, method, path, token string
		body                      any
	}{
		{"create table without token", "POST", "/api/tables", "", map[string]any{"name": "T"}},
		{"create table with unknown token", "POST", "/api/tables", "not-a-token", map[string]any{"name": "T"}},
		{"sit without token", "POST", "/api/tables/" + id + "/seats", "", map[string]any{"character": map[string]any{"name": "C"}}},
		{"leave without token", "DELETE", "/api/tables/" + id + "/seats/me", "", nil},
		{"me without token", "GET", "/api/players/me", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do(tc.method, tc.path, tc.body, tc.token), http.StatusUnauthorized, "unauthorized")
		})
	}
}

func TestCrossOriginRefused(t *testing.T) {
	e := newTestEnv(t)
	_, tok := e.newPlayer("Ann")
	for _, hdr := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		r := e.do("POST", "/api/tables", map[string]any{"name": "CSRF"}, "", append(hdr, "Cookie", "tavern_player="+tok)...)
		wantError(t, r, http.StatusForbidden, "forbidden")
	}
	if r := e.do("POST", "/api/tables", map[string]any{"name": "Same"}, "", "Sec-Fetch-Site", "same-origin", "Cookie", "tavern_player="+tok); r.status != http.StatusCreated {
		t.Errorf("same-origin POST: %d %s", r.status, r.body)
	}
}

func TestCreateTable(t *testing.T) {
	e := newTestEnv(t)
	_, tok := e.newPlayer("Owner")

	t.Run("defaults", func(t *testing.T) {
		r := e.do("POST", "/api/tables", map[string]any{"name": "Friday"}, tok)
		if r.status != http.StatusCreated {
			t.Fatalf("status = %d; %s", r.status, r.body)
		}
		var ts hub.TableSummary
		if err := json.Unmarshal(r.body, &ts); err != nil {
			t.Fatal(err)
		}
		if ts.ID == "" || ts.Name != "Friday" || ts.Ruleset != "d100" || ts.CombatMode != "tactical" || ts.Seats != 4 || ts.Adventure == "" {
			t.Errorf("table = %+v, want the built-in adventure, d100, tactical, 4 seats", ts)
		}
		list := e.do("GET", "/api/tables", nil, "")
		var got struct{ Tables []hub.TableSummary }
		if err := json.Unmarshal(list.body, &got); err != nil || len(got.Tables) != 1 || got.Tables[0].ID != ts.ID {
			t.Errorf("GET /api/tables = %s (err %v), want the new table", list.body, err)
		}
	})
	t.Run("settings", func(t *testing.T) {
		r := e.do("POST", "/api/tables", map[string]any{"name": "Grim", "ruleset": "d20", "combat_mode": "narrative", "seats": 2, "turn_timeout_s": 0}, tok)
		if r.status != http.StatusCreated {
			t.Fatalf("status = %d; %s", r.status, r.body)
		}
		m := r.json(t)
		if m["ruleset"] != "d20" || m["combat_mode"] != "narrative" || m["seats"] != 2.0 || m["turn_timeout_s"] != 0.0 {
			t.Errorf("table = %s", r.body)
		}
	})
	for _, tc := range []struct {
		name string
		body any
	}{
		{"no name", map[string]any{}},
		{"bad ruleset", map[string]any{"name": "T", "ruleset": "d30"}},
		{"bad combat mode", map[string]any{"name": "T", "combat_mode": "chaotic"}},
		{"zero seats", map[string]any{"name": "T", "seats": 0}},
		{"nine seats", map[string]any{"name": "T", "seats": 9}},
		{"negative timeout", map[string]any{"name": "T", "turn_timeout_s": -1}},
		{"timeout too long", map[string]any{"name": "T", "turn_timeout_s": 3601}},
		{"unknown adventure", map[string]any{"name": "T", "adventure": "nowhere"}},
		{"unknown field", map[string]any{"name": "T", "secret": true}},
		{"name too long", map[string]any{"name": strings.Repeat("n", 65)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.do("POST", "/api/tables", tc.body, tok), http.StatusBadRequest, "bad_request")
		})
	}
}

func TestSeats(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "Small", "seats": 1})
	_, a := e.newPlayer("Ann")
	_, b := e.newPlayer("Bob")
	seats := "/api/tables/" + id + "/seats"

	r := e.do("POST", seats, map[string]any{"character": map[string]any{"name": "Brunhild", "class": "warrior", "backstory": "A smith's daughter."}}, a)
	if r.status != http.StatusCreated {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	var sat struct {
		Seat      string        `json:"seat"`
		Character hub.Character `json:"character"`
	}
	if err := json.Unmarshal(r.body, &sat); err != nil {
		t.Fatal(err)
	}
	if sat.Seat == "" || sat.Character.Seat != sat.Seat || sat.Character.Name != "Brunhild" || sat.Character.Class != "warrior" {
		t.Errorf("sit = %s", r.body)
	}

	wantError(t, e.do("POST", seats, map[string]any{"character": map[string]any{"name": "Again"}}, a), http.StatusConflict, "conflict")
	wantError(t, e.do("POST", seats, map[string]any{"character": map[string]any{"name": "Vesna"}}, b), http.StatusConflict, "conflict")
	wantError(t, e.do("POST", seats, map[string]any{"character": map[string]any{"name": "Vesna", "class": "bard"}}, b), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", seats, map[string]any{"name": "Vesna"}, b), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", seats, map[string]any{"character": map[string]any{"name": ""}}, b), http.StatusBadRequest, "bad_request")
	for _, body := range []string{
		`{"character": {"name": "Vesna", "backstory": "Born \ud800 poor."}}`,
		`{"character": {"name": "Vesna", "backstory": "\u200b\u200d"}}`,
		`{"character": {"name": "Vesna", "backstory": "Born \u202eroop"}}`,
		`{"character": {"name": "Ves\u2060na"}}`,
	} {
		wantError(t, e.do("POST", seats, body, b), http.StatusBadRequest, "bad_request")
	}
	wantError(t, e.do("POST", "/api/tables/t-nope/seats", map[string]any{"character": map[string]any{"name": "V"}}, b), http.StatusNotFound, "not_found")

	if r := e.do("DELETE", seats+"/me", nil, a); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Errorf("leave: %d %s, want 204 and no body", r.status, r.body)
	}
	if r := e.do("POST", seats, map[string]any{"character": map[string]any{"name": "Vesna", "class": "rogue"}}, b); r.status != http.StatusCreated {
		t.Errorf("sit after the seat was freed: %d %s", r.status, r.body)
	}
}

func TestSnapshotAndEvents(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "Log"})
	pa, a := e.newPlayer("Ann")
	e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Brunhild"}}, a)
	e.arrive(id, pa) // the log is still until the next act

	r := e.do("GET", "/api/tables/"+id, nil, "")
	var snap hub.Snapshot
	if err := json.Unmarshal(r.body, &snap); err != nil || r.status != 200 {
		t.Fatalf("snapshot: %d %s (%v)", r.status, r.body, err)
	}
	if snap.Table.ID != id || len(snap.Party) != 1 || snap.Seq < 2 {
		t.Errorf("snapshot = %+v", snap)
	}
	wantError(t, e.do("GET", "/api/tables/t-nope", nil, ""), http.StatusNotFound, "not_found")

	type page struct {
		Events []engine.Event `json:"events"`
		Next   int64          `json:"next"`
	}
	get := func(q string) page {
		t.Helper()
		r := e.do("GET", "/api/tables/"+id+"/events"+q, nil, "")
		if r.status != 200 {
			t.Fatalf("events%s: %d %s", q, r.status, r.body)
		}
		var p page
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	all := get("")
	if int64(len(all.Events)) != snap.Seq || all.Next != snap.Seq || all.Events[0].Seq != 1 {
		t.Errorf("all events: %d events, next %d; want %d", len(all.Events), all.Next, snap.Seq)
	}
	one := get("?since=0&limit=1")
	if len(one.Events) != 1 || one.Events[0].Seq != 1 || one.Next != 1 {
		t.Errorf("since=0&limit=1: %+v", one)
	}
	none := get(fmt.Sprintf("?since=%d", snap.Seq))
	if none.Events == nil || len(none.Events) != 0 || none.Next != snap.Seq {
		t.Errorf("since=last: %+v, want [] and next=since", none)
	}
	if r := e.do("GET", fmt.Sprintf("/api/tables/%s/events?since=%d", id, snap.Seq), nil, ""); !strings.Contains(string(r.body), `"events":[]`) {
		t.Errorf("no events must be [], not null: %s", r.body)
	}
	big := e.do("GET", "/api/tables/"+id+"/events?since=0&limit=100000", nil, "")
	var bp struct {
		page
		Limit int64 `json:"limit"`
	}
	if err := json.Unmarshal(big.body, &bp); big.status != 200 || err != nil || bp.Limit != 500 || int64(len(bp.Events)) != snap.Seq || bp.Next != snap.Seq {
		t.Errorf("limit above the maximum: %d %s; want 200, clamped to limit 500", big.status, big.body)
	}
	for _, q := range []string{"?since=-1", "?since=x", "?limit=0", "?limit=-3"} {
		wantError(t, e.do("GET", "/api/tables/"+id+"/events"+q, nil, ""), http.StatusBadRequest, "bad_request")
	}
}

func TestStream(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "Stream"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/tables/"+id+"/stream", nil)
	req.Header.Set("Last-Event-ID", "0")
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type = %q", ct)
	}
	// A player sits while we listen: the stream shows the replayed intro
	// (seq 1), then the live join (seq 2).
	_, tok := e.newPlayer("Ann")
	sat := make(chan int, 1)
	go func() {
		// Not e.do: it may fail the test, which only the test goroutine may.
		body := strings.NewReader(`{"character":{"name":"Brunhild"}}`)
		req, _ := http.NewRequest("POST", e.url+"/api/tables/"+id+"/seats", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := e.client.Do(req)
		if err != nil {
			sat <- 0
			return
		}
		res.Body.Close()
		sat <- res.StatusCode
	}()
	// The join event is published before the seat's response is written:
	// wait for the request before the test (and its server) ends.
	defer func() {
		if st := <-sat; st != http.StatusCreated {
			t.Errorf("sit: status %d", st)
		}
	}()
	sc := bufio.NewScanner(res.Body)
	var ids []string
	var evs []engine.Event
	for sc.Scan() && len(evs) < 2 {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			ids = append(ids, strings.TrimPrefix(line, "id: "))
		case strings.HasPrefix(line, "data: "):
			var ev engine.Event
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			evs = append(evs, ev)
		}
	}
	if len(evs) != 2 || evs[0].Seq != 1 || evs[0].Kind != "narration" || evs[1].Seq != 2 || evs[1].Kind != "player_joined" {
		t.Fatalf("events = %+v (scan err %v)", evs, sc.Err())
	}
	if len(ids) != 2 || ids[0] != "1" || ids[1] != "2" {
		t.Errorf("ids = %v, want [1 2]", ids)
	}

	// Last-Event-ID resumes after that event.
	req2, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/tables/"+id+"/stream?since=0", nil)
	req2.Header.Set("Last-Event-ID", "1")
	res2, err := e.client.Do(req2)
	if err != nil {
		t.Fatal(err)
	}
	defer res2.Body.Close()
	sc2 := bufio.NewScanner(res2.Body)
	for sc2.Scan() {
		if l := sc2.Text(); strings.HasPrefix(l, "id: ") {
			if l != "id: 2" {
				t.Errorf("resumed stream starts at %q, want id: 2", l)
			}
			break
		}
	}

	wantError(t, e.do("GET", "/api/tables/t-nope/stream", nil, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do("GET", "/api/tables/"+id+"/stream", nil, "", "Last-Event-ID", "x"), http.StatusBadRequest, "bad_request")
}

func TestWebsocketIdentity(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "WS"})
	pid, tok := e.newPlayer("Ann")
	e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Brunhild"}}, tok)
	wsURL := "ws" + strings.TrimPrefix(e.url, "http") + "/ws/tables/" + id

	for _, tc := range []struct {
		name  string
		query string
		hdr   http.Header
	}{
		{"cookie", "?role=player", http.Header{"Cookie": {"tavern_player=" + tok}}},
		{"bearer", "?role=player", http.Header{"Authorization": {"Bearer " + tok}}},
		{"query token", "?role=player&token=" + tok, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, wsURL+tc.query, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}, HTTPHeader: tc.hdr})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var w struct {
				Type string `json:"type"`
				You  struct {
					PlayerID string `json:"player_id"`
					Role     string `json:"role"`
					Seat     string `json:"seat"`
				} `json:"you"`
			}
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatal(err)
			}
			if w.Type != "welcome" || w.You.PlayerID != pid || w.You.Role != "player" || w.You.Seat == "" {
				t.Errorf("welcome = %s", b)
			}
		})
	}
	t.Run("anonymous spectator", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, wsURL+"?role=spectator", &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		_, b, err := c.Read(ctx)
		if err != nil || !strings.Contains(string(b), `"role":"spectator"`) {
			t.Errorf("welcome = %s (%v)", b, err)
		}
	})
	t.Run("player without token", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, res, err := websocket.Dial(ctx, wsURL+"?role=player", &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
		if err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
			t.Errorf("dial as player without a token: err %v, response %v; want 401", err, res)
		}
	})
}

func TestOperations(t *testing.T) {
	e := newTestEnv(t)
	if r := e.do("GET", "/healthz", nil, ""); r.status != 200 || strings.TrimSpace(string(r.body)) != "ok" {
		t.Errorf("/healthz = %d %q", r.status, r.body)
	}
	if r := e.do("GET", "/readyz", nil, ""); r.status != 200 {
		t.Errorf("/readyz = %d %q", r.status, r.body)
	}
	e.newPlayer("Ann")
	e.do("GET", "/api/tables/t-nope", nil, "")
	wantError(t, e.do("GET", "/metrics", nil, ""), http.StatusUnauthorized, "unauthorized")
	r := e.do("GET", "/metrics", nil, testAdminToken)
	for _, want := range []string{
		`tavern_http_requests_total{code="201",method="POST",route="POST /api/players"} 1`,
		`tavern_http_requests_total{code="404",method="GET",route="GET /api/tables/{id}"} 1`,
		`tavern_http_request_duration_seconds_count{route="POST /api/players"} 1`,
	} {
		if !strings.Contains(string(r.body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	_ = e.hub.Close()
	if r := e.do("GET", "/readyz", nil, ""); r.status != http.StatusServiceUnavailable {
		t.Errorf("/readyz after the hub closed = %d, want 503", r.status)
	}
}

func TestUnknownEndpoints(t *testing.T) {
	e := newTestEnv(t)
	wantError(t, e.do("GET", "/api/nope", nil, ""), http.StatusNotFound, "not_found")
	r := e.do("PUT", "/api/tables", nil, "")
	wantError(t, r, http.StatusMethodNotAllowed, "bad_request")
	if a := r.header.Get("Allow"); a != "GET, POST" {
		t.Errorf("Allow = %q, want GET, POST", a)
	}
	if r := e.do("DELETE", "/api/players", nil, ""); r.header.Get("Allow") != "POST" {
		t.Errorf("DELETE /api/players: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

// brokenHub fails every snapshot with an internal error.
type brokenHub struct{ web.Tables }

// Visible lets every request through, to the failing snapshot.
func (brokenHub) Visible(context.Context, string, hub.Viewer) error { return nil }

func (brokenHub) Snapshot(context.Context, string) (hub.Snapshot, error) {
	return hub.Snapshot{}, errors.New("open /var/lib/tavern/secret.db: disk I/O error")
}

func TestInternalErrorHidden(t *testing.T) {
	var logs bytes.Buffer
	e := newTestEnv(t)
	s := web.NewOn(brokenHub{e.hub}, web.Config{Players: e.players, Log: slogTo(&logs)})
	hs := newHTTPTest(t, s.Handler())
	srv := &testEnv{t: t, url: hs.URL, client: hs.Client()}
	r := srv.do("GET", "/api/tables/t-1", nil, "")
	wantError(t, r, http.StatusInternalServerError, "internal")
	if strings.Contains(string(r.body), "secret") {
		t.Errorf("internal details leaked: %s", r.body)
	}
	if !strings.Contains(logs.String(), "secret.db") {
		t.Errorf("internal error not logged: %q", logs.String())
	}
	// The page shows the same generic error.
	p := srv.do("GET", "/tables/t-1", nil, "")
	if p.status != 500 || strings.Contains(string(p.body), "secret") {
		t.Errorf("page: %d, leaked: %v", p.status, strings.Contains(string(p.body), "secret"))
	}
}

// Header fields over web.MaxHeaderBytes get 431 with the error body on every
// route, the websocket's included.
func TestHeadersTooLarge(t *testing.T) {
	e := newTestEnv(t)
	pad := strings.Repeat("a", web.MaxHeaderBytes)
	for _, path := range []string{"/api/tables", "/", "/ws/t-x"} {
		wantError(t, e.do("GET", path, nil, "", "X-Pad", pad), http.StatusRequestHeaderFieldsTooLarge, "too_large")
	}
	if r := e.do("GET", "/api/tables", nil, "", "X-Pad", pad[:web.MaxHeaderBytes/2]); r.status != http.StatusOK {
		t.Errorf("half the limit: %d %s, want 200", r.status, r.body)
	}
}
