package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The notes, retcon, edit and feedback endpoints: what each answers, and
// a clear 4xx that changes nothing for bad input, strangers and
// non-owners.
func TestNotesRetconEditFeedbackEndpoints(t *testing.T) {
	e := newTestEnv(t)
	_, owner := e.newPlayer("Owner")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Notes"}, owner)
	if r.status != http.StatusCreated {
		t.Fatalf("create table: %d %s", r.status, r.body)
	}
	tid := r.json(t)["id"].(string)
	annID, ann := e.newPlayer("Ann")
	_, stranger := e.newPlayer("Stranger")
	if r := e.do("POST", "/api/tables/"+tid+"/seats", map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior"}}, ann); r.status != http.StatusCreated {
		t.Fatalf("sit: %d %s", r.status, r.body)
	}
	e.arrive(tid, annID)
	base := "/api/tables/" + tid

	notes := func() []any {
		t.Helper()
		r := e.do("GET", base+"/notes", nil, "")
		if r.status != http.StatusOK {
			t.Fatalf("notes: %d %s", r.status, r.body)
		}
		return r.json(t)["notes"].([]any)
	}
	// Bad input and strangers: a clear 4xx, nothing added.
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": ""}, ann), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": strings.Repeat("x", 501)}, ann), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": "x", "pin": true}, ann), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": "x"}, ""), http.StatusUnauthorized, "unauthorized")
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": "x"}, stranger), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", "/api/tables/nope/notes", map[string]any{"text": "x"}, ann), http.StatusNotFound, "not_found")
	if n := notes(); len(n) != 0 {
		t.Fatalf("notes after refusals: %v", n)
	}

	r = e.do("POST", base+"/notes", map[string]any{"text": "The innkeeper is called Bram."}, ann)
	if r.status != http.StatusCreated {
		t.Fatalf("add note: %d %s", r.status, r.body)
	}
	nid := r.json(t)["id"].(string)
	if r := e.do("GET", base+"/notes", nil, owner); r.json(t)["owner"] != true {
		t.Errorf("the owner's GET /notes says owner %v", r.json(t)["owner"])
	}
	wantError(t, e.do("DELETE", base+"/notes/"+nid, nil, stranger), http.StatusForbidden, "forbidden")
	wantError(t, e.do("DELETE", base+"/notes/n-nope", nil, owner), http.StatusNotFound, "not_found")
	if r := e.do("POST", base+"/notes", map[string]any{"text": "Snow falls."}, owner); r.status != http.StatusCreated {
		t.Fatalf("the owner's note: %d %s", r.status, r.body)
	}
	if r := e.do("DELETE", base+"/notes/"+nid, nil, owner); r.status != http.StatusNoContent {
		t.Fatalf("the owner removes Ann's note: %d %s", r.status, r.body)
	}
	if n := notes(); len(n) != 1 || n[0].(map[string]any)["text"] != "Snow falls." {
		t.Fatalf("notes %v", n)
	}
	for i := 1; i < 30; i++ {
		if r := e.do("POST", base+"/notes", map[string]any{"text": fmt.Sprintf("fact %d", i)}, ann); r.status != http.StatusCreated {
			t.Fatalf("note %d: %d %s", i+1, r.status, r.body)
		}
	}
	wantError(t, e.do("POST", base+"/notes", map[string]any{"text": "one too many"}, ann), http.StatusConflict, "conflict")
	if n := notes(); len(n) != 30 {
		t.Fatalf("%d notes, want 30", len(n))
	}

	// The narration of Ann's arrival.
	evs := e.do("GET", base+"/events?since=0", nil, "").json(t)["events"].([]any)
	var narration, other int64
	for _, v := range evs {
		ev := v.(map[string]any)
		if ev["kind"] == "narration" {
			narration = int64(ev["seq"].(float64))
		} else {
			other = int64(ev["seq"].(float64))
		}
	}
	seqPath := func(seq int64, what string) string { return fmt.Sprintf("%s/events/%d/%s", base, seq, what) }
	wantError(t, e.do("POST", seqPath(narration, "edit"), map[string]any{"text": "x"}, ann), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", seqPath(narration, "edit"), map[string]any{"text": ""}, owner), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", seqPath(other, "edit"), map[string]any{"text": "x"}, owner), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", seqPath(99999, "edit"), map[string]any{"text": "x"}, owner), http.StatusNotFound, "not_found")
	wantError(t, e.do("POST", base+"/events/abc/edit", map[string]any{"text": "x"}, owner), http.StatusNotFound, "not_found")
	r = e.do("POST", seqPath(narration, "edit"), map[string]any{"text": "Aldric strides in, soaked."}, owner)
	if r.status != http.StatusOK || r.json(t)["text"] != "Aldric strides in, soaked." {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}

	wantError(t, e.do("POST", seqPath(narration, "feedback"), map[string]any{"score": 1}, owner), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", seqPath(narration, "feedback"), map[string]any{"score": 0}, ann), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", seqPath(other, "feedback"), map[string]any{"score": 1}, ann), http.StatusBadRequest, "bad_request")
	if r := e.do("POST", seqPath(narration, "feedback"), map[string]any{"score": -1, "comment": "too short"}, ann); r.status != http.StatusNoContent {
		t.Fatalf("feedback: %d %s", r.status, r.body)
	}
	// The operator's LLM page shows it, by model and prompt version.
	if page := string(e.admin("GET", "/admin/llm").body); !strings.Contains(page, `id="by-prompt"`) || !strings.Contains(page, "<td class=\"num\">1</td>") {
		t.Errorf("the LLM page shows no score:\n%s", page)
	}

	wantError(t, e.do("POST", base+"/retcon", map[string]any{"then": "retry"}, ann), http.StatusForbidden, "forbidden")
	wantError(t, e.do("POST", base+"/retcon", map[string]any{"then": "later"}, owner), http.StatusBadRequest, "bad_request")
	wantError(t, e.do("POST", base+"/retcon", map[string]any{}, owner), http.StatusBadRequest, "bad_request")
	r = e.do("POST", base+"/retcon", map[string]any{"then": "drop"}, owner)
	if r.status != http.StatusOK {
		t.Fatalf("retcon: %d %s", r.status, r.body)
	}
	if m := r.json(t); m["from_seq"] == nil || m["to_seq"] == nil || m["turn"] == nil {
		t.Errorf("retcon answer %s", r.body)
	}
	wantError(t, e.do("POST", base+"/retcon", map[string]any{"then": "drop"}, owner), http.StatusConflict, "conflict")
}
