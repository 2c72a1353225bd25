package tavern

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"tavern/internal/pgtest"
)

// TestOperatorOnPostgres plays the adventures and the operator's pages on
// a PostgreSQL store, through the API: what the other tests check on
// SQLite, briefly, so the wiring of both engines is seen to work.
func TestOperatorOnPostgres(t *testing.T) {
	cfg := testConfig(t)
	cfg.DB, cfg.ClusterToken = pgtest.URL(t), "test-token"
	s := startOp(t, cfg)
	pid, tok := s.player("Quillithorn")

	// A player's adventure: uploaded, listed, a table made from it.
	src, err := os.ReadFile("../../adventures/starter/rat-cellar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", s.srv.URL+"/api/adventures", strings.NewReader(string(src)))
	req.Header.Set("Content-Type", "application/yaml")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	var list struct {
		Adventures []map[string]any `json:"adventures"`
	}
	if st := s.call("GET", "/api/adventures", "", nil, &list); st != http.StatusOK || list.Adventures[len(list.Adventures)-1]["id"] != "rat-cellar" {
		t.Fatalf("adventures: %d %v", st, list)
	}
	var tb map[string]any
	if st := s.call("POST", "/api/tables", tok, map[string]any{"name": "Rats", "adventure": "rat-cellar"}, &tb); st != http.StatusCreated {
		t.Fatalf("table from the adventure: %d %v", st, tb)
	}
	s.sit(tok, tb["id"].(string), "Bree", "a lighthouse keeper's daughter")

	// Budgets, console users, a player's ban and erasure.
	if st := s.call("PUT", "/api/admin/tables/"+tb["id"].(string)+"/budget", "admin", map[string]any{"usd_per_day": 2}, nil); st/100 != 2 {
		t.Errorf("set a budget: %d", st)
	}
	if st := s.call("GET", "/api/admin/budgets", "admin", nil, nil); st != http.StatusOK {
		t.Errorf("budgets: %d", st)
	}
	var u map[string]any
	if st := s.call("POST", "/api/admin/users", "admin", map[string]string{"name": "Vera", "role": "viewer"}, &u); st != http.StatusCreated {
		t.Fatalf("console user: %d %v", st, u)
	}
	if st := s.call("GET", "/api/admin/players", u["token"].(string), nil, nil); st != http.StatusOK {
		t.Errorf("the viewer reads the players: %d", st)
	}
	if st := s.call("POST", "/api/admin/players/"+pid+"/ban", "admin", map[string]string{"reason": "spam"}, nil); st != http.StatusNoContent {
		t.Fatalf("ban: %d", st)
	}
	if st := s.call("GET", "/api/players/me", tok, nil, nil); st != http.StatusUnauthorized {
		t.Errorf("a banned player's token: %d, want 401", st)
	}
	var x map[string]any
	if st := s.call("GET", "/api/admin/players/"+pid+"/export", "admin", nil, &x); st != http.StatusOK || len(x["characters"].([]any)) != 1 {
		t.Errorf("export: %d %v", st, x)
	}
	if st := s.call("DELETE", "/api/admin/players/"+pid, "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("erase: %d", st)
	}
	var found struct {
		Players []map[string]any `json:"players"`
	}
	if st := s.call("GET", "/api/admin/players?q="+pid, "admin", nil, &found); st != http.StatusOK || len(found.Players) != 1 || found.Players[0]["erased"] != true {
		t.Errorf("the erased player: %d %v", st, found)
	}
	if st := s.call("GET", "/readyz", "", nil, nil); st != http.StatusOK {
		t.Errorf("readyz: %d", st)
	}
}
