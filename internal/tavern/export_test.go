package tavern

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestOperatorExport: the console exports any table's agent history as
// history_<agent>.jsonl, one message a line, with the admin token only;
// the table page links it.
func TestOperatorExport(t *testing.T) {
	s := startOp(t, testConfig(t))
	_, tok := s.player("Ann")
	id := s.table(tok, "Exported", "Bram", "")
	ws := s.dial(id, tok, "player")
	ws.send(map[string]any{"type": "act", "id": "a1", "text": "look around"})
	ws.await("the narration", event("narration", func(f map[string]any) bool {
		d, _ := f["data"].(map[string]any)
		return d["action_id"] != nil && d["action_id"] != ""
	}))
	get := func(token, path string) (int, string) {
		req, _ := http.NewRequest("GET", s.srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	st, body := get("admin", "/api/admin/tables/"+id+"/export/history_narrative.jsonl")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if st != http.StatusOK || len(lines) < 3 {
		t.Fatalf("export: %d, %d lines", st, len(lines))
	}
	for _, l := range lines {
		var m struct{ Role string }
		if err := json.Unmarshal([]byte(l), &m); err != nil || m.Role == "" {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if st, _ := get(tok, "/api/admin/tables/"+id+"/export/history_narrative.jsonl"); st != http.StatusUnauthorized {
		t.Errorf("a player's token: %d, want 401", st)
	}
	if st, _ := get("admin", "/api/admin/tables/nope/export/history_narrative.jsonl"); st != http.StatusNotFound {
		t.Errorf("no table: %d, want 404", st)
	}
	if st, _ := get("admin", "/api/admin/tables/"+id+"/export/history_secret.jsonl"); st != http.StatusNotFound {
		t.Errorf("no such agent: %d, want 404", st)
	}
	if page := s.page("/admin/tables/" + id); !strings.Contains(page, "/export/history_combat.jsonl") {
		t.Error("the table page does not link the exports")
	}
}
