package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func starter(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../adventures/starter/rat-cellar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (e *testEnv) yaml(method, path, src, token string) response {
	e.t.Helper()
	return e.do(method, path, src, token, "Content-Type", "application/yaml")
}

// TestAdventureUploadPlay: an upload with a mistake is refused with its
// problem and line; the fixed one is listed after the built-in ones, a
// table is made of it and played over a websocket to the cellar.
func TestAdventureUploadPlay(t *testing.T) {
	e := newTestEnv(t)
	_, ann := e.newPlayer("Ann")
	src := starter(t)

	bad := e.yaml("POST", "/api/adventures", strings.Replace(src, "{to: cellar,", "{to: attic,", 1), ann)
	if bad.status != http.StatusBadRequest {
		t.Fatalf("a bad upload: %d %s", bad.status, bad.body)
	}
	var pb struct {
		Error struct {
			Code     string
			Problems []struct {
				Line          int
				Path, Message string
			}
		}
	}
	if err := json.Unmarshal(bad.body, &pb); err != nil {
		t.Fatal(err)
	}
	if pb.Error.Code != "bad_request" || len(pb.Error.Problems) != 1 || pb.Error.Problems[0].Line != 13 ||
		pb.Error.Problems[0].Path != "locations[0].exits[0].to" || !strings.Contains(pb.Error.Problems[0].Message, `"attic"`) {
		t.Errorf("problems = %+v", pb.Error)
	}
	if r := e.yaml("POST", "/api/adventures", src, ""); r.status != http.StatusUnauthorized {
		t.Errorf("upload without a player: %d", r.status)
	}
	if r := e.yaml("POST", "/api/adventures/validate", strings.Replace(src, "hp: 12\n    gold", "hp: twelve\n    gold", 1), ""); r.status != 200 ||
		!strings.Contains(string(r.body), `"line":30`) {
		t.Errorf("validate: %d %s", r.status, r.body)
	}

	r := e.yaml("POST", "/api/adventures", src, ann)
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	if id != "rat-cellar" {
		t.Errorf("id = %q", id)
	}
	list := e.do("GET", "/api/adventures", nil, "").json(t)["adventures"].([]any)
	last := list[len(list)-1].(map[string]any)
	if first := list[0].(map[string]any); first["built_in"] != true || last["id"] != id || last["built_in"] != false || last["author"] != "Ann" {
		t.Errorf("list = %v", list)
	}
	if got := e.do("GET", "/api/adventures/"+id, nil, "").json(t)["source"]; got != src {
		t.Errorf("source = %v", got)
	}
	if s := e.do("GET", "/api/adventures/schema.json", nil, ""); s.status != 200 || !strings.Contains(string(s.body), `"$defs"`) {
		t.Errorf("schema: %d", s.status)
	}

	tr := e.do("POST", "/api/tables", map[string]any{"name": "Rats", "adventure": id}, ann)
	if tr.status != http.StatusCreated {
		t.Fatalf("table: %d %s", tr.status, tr.body)
	}
	table := tr.json(t)["id"].(string)
	if st := e.do("POST", "/api/tables/"+table+"/seats", map[string]any{"character": map[string]any{"name": "Bree", "class": "warrior"}}, ann); st.status != http.StatusCreated {
		t.Fatalf("sit: %d %s", st.status, st.body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/ws/tables/"+table+"?role=player&token="+ann,
		&websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"act","id":"a1","text":"I climb down the trapdoor"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("no move to the cellar: %v", err)
		}
		if strings.Contains(string(b), `"kind":"narration"`) && strings.Contains(string(b), "Barrels, cobwebs") {
			break
		}
	}
	if snap := e.do("GET", "/api/tables/"+table, nil, "").json(t); snap["location"].(map[string]any)["id"] != "cellar" {
		t.Errorf("the party is at %v", snap["location"])
	}
	list = e.do("GET", "/api/adventures", nil, "").json(t)["adventures"].([]any)
	if n := list[len(list)-1].(map[string]any)["tables"]; n != float64(1) {
		t.Errorf("tables played = %v, want 1", n)
	}
}

// TestAdventureForkReplace: only the author replaces or hides; tables keep
// the copy they were made from; anyone forks a listed adventure, built in
// or not; a hidden one makes no new table.
func TestAdventureForkReplace(t *testing.T) {
	e := newTestEnv(t)
	_, ann := e.newPlayer("Ann")
	_, bob := e.newPlayer("Bob")
	src := starter(t)
	id := e.yaml("POST", "/api/adventures", src, ann).json(t)["id"].(string)
	old := e.do("POST", "/api/tables", map[string]any{"name": "Old", "adventure": id}, ann).json(t)["id"].(string)

	changed := strings.Replace(src, "A smoky common room.", "A bright, scrubbed common room.", 1)
	// The editor forks on exactly this answer (its code, not its words).
	wantError(t, e.yaml("PUT", "/api/adventures/"+id, changed, bob), http.StatusForbidden, "forbidden")
	if r := e.yaml("PUT", "/api/adventures/"+id, "id: x\n", ann); r.status != http.StatusBadRequest {
		t.Errorf("a bad replacement: %d", r.status)
	}
	if r := e.yaml("PUT", "/api/adventures/"+id, changed, ann); r.status != http.StatusOK {
		t.Fatalf("Ann replaces hers: %d %s", r.status, r.body)
	}
	wantError(t, e.yaml("PUT", "/api/adventures/greyhollow", changed, ann), http.StatusForbidden, "forbidden")
	fresh := e.do("POST", "/api/tables", map[string]any{"name": "New", "adventure": id}, ann).json(t)["id"].(string)
	desc := func(table string) string {
		return e.do("GET", "/api/tables/"+table, nil, "").json(t)["location"].(map[string]any)["description"].(string)
	}
	if d := desc(old); !strings.Contains(d, "smoky") {
		t.Errorf("the old table's inn: %q", d)
	}
	if d := desc(fresh); !strings.Contains(d, "scrubbed") {
		t.Errorf("the new table's inn: %q", d)
	}
	if _, kept, err := e.store.TableAdventure(context.Background(), old); err != nil || string(kept) != src {
		t.Errorf("the old table's copy: %v", err)
	}

	f := e.do("POST", "/api/adventures/"+id+"/fork", nil, bob)
	if f.status != http.StatusCreated {
		t.Fatalf("fork: %d %s", f.status, f.body)
	}
	fork := f.json(t)
	if fork["id"] == id || fork["author"] != "Bob" || fork["forked_from"] != id {
		t.Errorf("fork = %v", fork)
	}
	if r := e.yaml("PUT", "/api/adventures/"+fork["id"].(string), src, bob); r.status != http.StatusOK {
		t.Errorf("Bob replaces his fork: %d", r.status)
	}
	if g := e.do("POST", "/api/adventures/greyhollow/fork", nil, bob); g.status != http.StatusCreated {
		t.Errorf("fork a built-in: %d %s", g.status, g.body)
	}

	if r := e.do("DELETE", "/api/adventures/"+id, nil, bob); r.status != http.StatusForbidden {
		t.Errorf("Bob hides Ann's: %d", r.status)
	}
	if r := e.do("DELETE", "/api/adventures/"+id, nil, ann); r.status != http.StatusNoContent {
		t.Fatalf("Ann hides hers: %d %s", r.status, r.body)
	}
	for _, a := range e.do("GET", "/api/adventures", nil, "").json(t)["adventures"].([]any) {
		if a.(map[string]any)["id"] == id {
			t.Error("a hidden adventure is listed")
		}
	}
	wantError(t, e.do("GET", "/api/adventures/"+id, nil, ""), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", "/api/tables", map[string]any{"name": "x", "adventure": id}, ann), http.StatusBadRequest, "bad_request")
	if d := desc(old); !strings.Contains(d, "smoky") {
		t.Errorf("the table of a hidden adventure: %q", d)
	}
}

// TestAdventurePages: the list names the built-in adventures first with
// their tables; the editor starts from the docs' example; a hidden
// adventure's page is its author's only.
func TestAdventurePages(t *testing.T) {
	e := newTestEnv(t)
	_, ann := e.newPlayer("Ann")
	_, bob := e.newPlayer("Bob")
	e.do("POST", "/api/tables", map[string]any{"name": "x", "adventure": "barrow"}, ann)
	list := e.do("GET", "/adventures", nil, "")
	body := string(list.body)
	if list.status != 200 || !strings.Contains(body, `data-adventure-id="barrow"`) {
		t.Fatalf("/adventures: %d", list.status)
	}
	if i := strings.Index(body, `data-adventure-id="barrow"`); !strings.Contains(body[i:i+600], `<td data-label="Tables" class="a-tables">1</td>`) {
		t.Errorf("the barrow's row lacks its table: %s", body[i:i+600])
	}
	if r := e.do("GET", "/adventures/new", nil, ""); r.status != 200 || !strings.Contains(string(r.body), "id: rat-cellar") {
		t.Errorf("/adventures/new: %d", r.status)
	}
	id := e.yaml("POST", "/api/adventures", starter(t), ann).json(t)["id"].(string)
	e.do("DELETE", "/api/adventures/"+id, nil, ann)
	if r := e.do("GET", "/adventures/"+id+"/edit", nil, bob); r.status != http.StatusNotFound {
		t.Errorf("someone else opens a hidden adventure: %d", r.status)
	}
	if r := e.do("GET", "/adventures/"+id+"/edit", nil, ann); r.status != 200 || !strings.Contains(string(r.body), "Edit The Rat Cellar") {
		t.Errorf("its author opens a hidden adventure: %d", r.status)
	}
	if r := e.do("GET", "/adventures/nope/edit", nil, ""); r.status != http.StatusNotFound {
		t.Errorf("an unknown adventure's page: %d", r.status)
	}
	// Its author may hide it, not fork it; anyone else may fork it.
	mine := e.yaml("POST", "/api/adventures", starter(t), ann).json(t)["id"].(string)
	for _, c := range []struct {
		who        string
		token      string
		fork, hide bool
	}{{"author", ann, false, true}, {"another player", bob, true, false}} {
		body := string(e.do("GET", "/adventures/"+mine+"/edit", nil, c.token).body)
		if got := strings.Contains(body, `id="fork"`); got != c.fork {
			t.Errorf("%s: Fork offered %v, want %v", c.who, got, c.fork)
		}
		if got := strings.Contains(body, `id="hide"`); got != c.hide {
			t.Errorf("%s: Hide offered %v, want %v", c.who, got, c.hide)
		}
	}
}

// TestAdventureTextIsNeverMarkup: an adventure's text is shown escaped on
// its pages.
func TestAdventureTextIsNeverMarkup(t *testing.T) {
	e := newTestEnv(t)
	_, ann := e.newPlayer("Ann")
	src := strings.Replace(starter(t), "name: The Rat Cellar", `name: "<script>alert(1)</script>"`, 1)
	r := e.yaml("POST", "/api/adventures", src, ann)
	if r.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	id := r.json(t)["id"].(string)
	for _, path := range []string{"/adventures", "/adventures/" + id + "/edit", "/"} {
		body := string(e.do("GET", path, nil, ann).body)
		if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert") {
			t.Errorf("%s shows the title unescaped or not at all", path)
		}
	}
}

// TestLobbyDefaultsToTheFirstEvening: the lobby's form lists every
// adventure, the default one first (picked unless another is chosen).
func TestLobbyDefaultsToTheFirstEvening(t *testing.T) {
	e := newTestEnv(t)
	body := string(e.do("GET", "/", nil, "").body)
	i := strings.Index(body, `id="table-adventure"`)
	if i < 0 {
		t.Fatal("no adventure select in the lobby")
	}
	first := strings.Index(body[i:], "<option")
	if !strings.HasPrefix(body[i+first:], `<option value="greyhollow"`) || !strings.Contains(body[i:], `value="barrow"`) {
		t.Errorf("the lobby's adventures: %s", body[i:i+400])
	}
	body = string(e.do("GET", "/?adventure=barrow", nil, "").body)
	if !strings.Contains(body, `<option value="barrow" selected>`) {
		t.Error("?adventure=barrow is not picked")
	}
}
