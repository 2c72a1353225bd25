package tavern

import (
	"net/http"
	"testing"
)

// The spend page lists every table, private ones too, with its name,
// before any of them spent anything or has a budget of its own.
func TestBudgetsListPrivateTables(t *testing.T) {
	s := startOp(t, testConfig(t))
	_, tok := s.player("Ann")
	ids := map[string]string{}
	for _, tc := range []struct {
		name    string
		private bool
	}{{"Open Door", false}, {"Locked Door", true}} {
		var tb map[string]any
		if st := s.call("POST", "/api/tables", tok, map[string]any{"name": tc.name, "private": tc.private}, &tb); st != http.StatusCreated {
			t.Fatalf("new table %s: %d %v", tc.name, st, tb)
		}
		ids[tb["id"].(string)] = tc.name
	}
	var b struct {
		Tables []struct {
			TableID string `json:"table_id"`
			Name    string `json:"name"`
		} `json:"tables"`
	}
	if st := s.call("GET", "/api/admin/budgets", "admin", nil, &b); st != http.StatusOK {
		t.Fatalf("budgets: %d", st)
	}
	got := map[string]string{}
	for _, row := range b.Tables {
		got[row.TableID] = row.Name
	}
	for id, name := range ids {
		if got[id] != name {
			t.Errorf("table %s (%s): row name %q, want it listed by name", id, name, got[id])
		}
	}
}
