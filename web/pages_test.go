package web_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/web"
)

const hostile = `<script>alert(1)</script>`

// wantHas checks that body contains every string, and none of the
// forbidden ones.
func wantHas(t *testing.T, body string, want []string, forbidden ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %s", w)
		}
	}
	for _, f := range forbidden {
		if strings.Contains(body, f) {
			t.Errorf("page contains %s", f)
		}
	}
}

func TestLobbyPage(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": hostile})

	r := e.do("GET", "/", nil, "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / = %d %s", r.status, r.header.Get("Content-Type"))
	}
	body := string(r.body)
	wantHas(t, body, []string{
		`id="name-form"`, `id="player-name"`, `id="create-form"`, `id="table-name"`, `id="table-ruleset"`,
		`id="table-combat-mode"`, `id="table-seats"`, `id="tables"`, `id="dm"`, "offline rules narrator",
		`data-table-id="` + id + `"`, `href="/tables/` + id + `?watch=1"`, `href="/tables/` + id + `#seat-form"`,
		"&lt;script&gt;alert(1)&lt;/script&gt;",
	}, hostile, `id="player-name-current"`)
	if n := strings.Count(body, "<script"); n != 1 {
		t.Errorf("the lobby has %d <script> tags, want only lobby.js", n)
	}
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}

	// With a player cookie the lobby greets the player by name.
	_, tok := e.newPlayer("Ann<b>")
	body = string(e.do("GET", "/", nil, "", "Cookie", "tavern_player="+tok).body)
	wantHas(t, body, []string{`id="player-name-current">Ann&lt;b&gt;<`}, "Ann<b>")
	if strings.Contains(body, `id="create-submit" type="submit" disabled`) {
		t.Errorf("the create form is disabled for a player")
	}
}

func TestTablePage(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": hostile})
	pid, tok := e.newPlayer("Ann")
	if r := e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": `<img src=x onerror=alert(2)>`, "class": "rogue"}}, tok); r.status != 201 {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	e.arrive(id, pid) // the DM's arrival line is played: nobody is busy
	// The panels' containers; static/panels.js draws them from the JSON
	// snapshot, where markup in a name is escaped too.
	panels := []string{`id="log"`, `id="combat-panel"`, `id="party"`, `id="location"`, `id="quests"`, `id="mode"`,
		`id="snapshot-data"`, `data-table-id="` + id + `"`, "&lt;script&gt;alert(1)&lt;/script&gt;",
		`\u003cimg src=x onerror=alert(2)\u003e`, "Greyhollow Square"}
	// Neither the page nor its JSON snapshot holds the raw markup.
	raw := []string{hostile, "<img src=x", "<script>alert"}

	t.Run("spectator", func(t *testing.T) {
		r := e.do("GET", "/tables/"+id, nil, "")
		if r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		body := string(r.body)
		wantHas(t, body, append(panels, `id="seat-form"`, `id="seat-name"`, `id="seat-class"`, `value="warrior"`,
			`id="seat-player-name"`, `data-role="spectator"`), append(raw, `id="action-text"`, `id="action-send"`, `id="sheet"`)...)
		// Exactly two scripts: table.js and the inert JSON snapshot.
		if n := strings.Count(body, "<script"); n != 2 {
			t.Errorf("%d <script> tags, want 2", n)
		}
	})
	t.Run("seated player", func(t *testing.T) {
		body := string(e.do("GET", "/tables/"+id, nil, "", "Cookie", "tavern_player="+tok).body)
		wantHas(t, body, append(panels, `id="action-text"`, `id="action-send"`, `id="chat-text"`, `id="sheet"`,
			`data-role="player"`, `data-seat="1"`), append(raw, `id="seat-form"`)...)
		// Exploration: the shipped snapshot says the player may act.
		if !strings.Contains(body, `"can_act":true,"turn":"free"`) {
			t.Errorf("the shipped snapshot does not let the player act in exploration")
		}
	})
	t.Run("seated player watching", func(t *testing.T) {
		body := string(e.do("GET", "/tables/"+id+"?watch=1", nil, "", "Cookie", "tavern_player="+tok).body)
		wantHas(t, body, []string{`data-role="spectator"`}, `id="action-text"`, `id="seat-form"`)
	})
	t.Run("unknown table", func(t *testing.T) {
		r := e.do("GET", "/tables/t-nope", nil, "")
		if r.status != http.StatusNotFound || !strings.Contains(string(r.body), `id="page-error"`) {
			t.Errorf("GET /tables/t-nope = %d %s", r.status, r.body)
		}
	})
	t.Run("unknown page", func(t *testing.T) {
		if r := e.do("GET", "/nowhere", nil, ""); r.status != http.StatusNotFound {
			t.Errorf("GET /nowhere = %d", r.status)
		}
	})
	t.Run("static files", func(t *testing.T) {
		for _, f := range []string{"table.js", "panels.js", "log.js", "dom.js", "eventline.js", "lobby.js", "style.css", "favicon.svg"} {
			r := e.do("GET", "/static/"+f, nil, "")
			if r.status != 200 || len(r.body) == 0 {
				t.Errorf("/static/%s = %d", f, r.status)
			}
		}
		if r := e.do("GET", "/static/", nil, ""); r.status != http.StatusNotFound {
			t.Errorf("directory listing: %d", r.status)
		}
		if r := e.do("GET", "/static/eventline.test.mjs", nil, ""); r.status != http.StatusNotFound {
			t.Errorf("the static files' test is served: %d", r.status)
		}
	})
}

// combatSnapshot is a tactical fight at round 2 where it is pc:2's turn.
func combatSnapshot() hub.Snapshot {
	hp := func(v int) *int { return &v }
	return hub.Snapshot{
		Table: hub.TableSummary{ID: "t-1", Name: "Fight", Ruleset: "d100", CombatMode: "tactical", Mode: "combat", Seats: 4, Seated: 2},
		Seq:   40, Mode: "combat",
		Location: hub.Location{ID: "mill", Name: "The Old Mill", Exits: []engine.Exit{{To: "square", Name: "back to the square"}}},
		Party: []hub.Character{
			{ID: "c1", Name: "Brunhild", Class: "warrior", Level: 1, HP: 30, MaxHP: 45, Seat: "1", PlayerID: "p1", Equipped: map[string]hub.Ref{"weapon": {Name: "Longsword"}, "armour": {Name: "Chain mail"}}},
			{ID: "c2", Name: "Vesna", Class: "rogue", Level: 1, HP: 34, MaxHP: 34, Seat: "2", PlayerID: "p2"},
		},
		NPCs: []hub.NPC{{ID: "snikket", Name: "Snikket", Hostile: true, HP: hp(6), MaxHP: hp(18)}},
		Combat: &hub.CombatView{CombatID: "cb1", Round: 2, Index: 2, Initiative: []engine.InitiativeEntry{
			{ID: "dm", Name: "DM", Kind: "bookend"},
			{ID: "pc:1", Name: "Brunhild", Kind: "pc", Initiative: hp(85), HP: hp(30), MaxHP: hp(45)},
			{ID: "pc:2", Name: "Vesna", Kind: "pc", Initiative: hp(60), HP: hp(34), MaxHP: hp(34), Statuses: []string{"off-balance"}},
			{ID: "dm:snikket", Name: "Snikket", Kind: "npc", Initiative: hp(58), HP: hp(6), MaxHP: hp(18)},
		}},
		Recent: []engine.Event{{Seq: 40, Kind: "turn", Data: engine.TurnData{Round: 2, Index: 2, Entry: engine.InitiativeEntry{ID: "pc:2", Name: "Vesna", Kind: "pc"}}}},
	}
}

func renderTable(t *testing.T, v web.TableView) string {
	t.Helper()
	page, err := web.RenderTablePage(v)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// The page renders only the shell: every panel's container is empty,
// for static/panels.js to draw from the snapshot JSON the page ships
// (panels.test.mjs checks what it draws from this very fight).
func TestTablePageShell(t *testing.T) {
	snap := combatSnapshot()
	p2 := &engine.Player{ID: "p2", Name: "Mira"}
	body := renderTable(t, web.TableView{Snap: snap, Player: p2, Me: &snap.Party[1]})
	for _, empty := range []string{`<section class="card" id="combat-panel"></section>`, `<ul id="party" class="party"></ul>`,
		`<section class="card" id="sheet"></section>`, `<section class="card" id="location"></section>`,
		`<section class="card" id="quests"></section>`, `<div id="combat-bar" class="combat-bar" hidden></div>`} {
		if !strings.Contains(body, empty) {
			t.Errorf("the page lacks the empty container %s", empty)
		}
	}
	// The action box waits, disabled, for the server's word (can_act).
	if !regexp.MustCompile(`id="action-send"[^>]* disabled`).MatchString(body) {
		t.Errorf("the action box is enabled before the page knows whether its player may act")
	}
	shell := regexp.MustCompile(`(?s)<script id="snapshot-data".*?</script>`).ReplaceAllString(body, "")
	wantHas(t, shell, nil, "data-entry=", "data-character=", "Snikket", "30/45", "Waiting for")
	// The log line ("Round 2: Vesna's turn", static/eventline.test.mjs) is
	// rendered by log.js from the recent events the page ships as JSON.
	if recent := shippedEvents(t, body); len(recent) != 1 || recent[0].Seq != 40 || recent[0].Kind != "turn" {
		t.Errorf("the page ships the events %+v, want the turn event 40", recent)
	} else if d, _ := recent[0].Data.(engine.TurnData); d.Entry.Name != "Vesna" {
		t.Errorf("the shipped turn event names %q, want Vesna", d.Entry.Name)
	}
}

// shippedEvents decodes the recent events of the page's snapshot JSON, the
// ones log.js renders into the log.
func shippedEvents(t *testing.T, body string) []engine.Event {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script id="snapshot-data" type="application/json">(.*?)</script>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("the page has no snapshot-data script")
	}
	var snap hub.Snapshot
	if err := json.Unmarshal([]byte(m[1]), &snap); err != nil {
		t.Fatalf("snapshot-data: %v", err)
	}
	return snap.Recent
}

// The story download: the table's narration as Markdown or text, public
// like GET /events; a bad format is a 400.
func TestStoryDownload(t *testing.T) {
	e := newTestEnv(t)
	id := e.newTable(map[string]any{"name": "Saga"})
	_, a := e.newPlayer("Ann")
	e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Brunhild", "backstory": "A smith's daughter."}}, a)
	var page struct {
		Events []engine.Event `json:"events"`
	}
	r := e.do("GET", "/api/tables/"+id+"/events", nil, "")
	if err := json.Unmarshal(r.body, &page); err != nil {
		t.Fatal(err)
	}
	var narration string
	for _, ev := range page.Events {
		if d, ok := ev.Data.(engine.NarrationData); ok {
			narration = d.Text
		}
	}
	if narration == "" {
		t.Fatalf("no narration after the session start: %s", r.body)
	}
	md := e.do("GET", "/api/tables/"+id+"/story?format=md", nil, "")
	if md.status != 200 || !strings.HasPrefix(string(md.body), "# Saga\n") || !strings.Contains(string(md.body), narration) {
		t.Errorf("markdown story: %d %q", md.status, md.body)
	}
	txt := e.do("GET", "/api/tables/"+id+"/story?format=text", nil, "")
	if txt.status != 200 || !strings.HasPrefix(string(txt.body), "Saga\n====\n") || !strings.Contains(string(txt.body), narration) {
		t.Errorf("text story: %d %q", txt.status, txt.body)
	}
	wantError(t, e.do("GET", "/api/tables/"+id+"/story?format=pdf", nil, ""), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("GET", "/api/tables/t-nope/story", nil, ""), http.StatusNotFound, "not_found")
}
