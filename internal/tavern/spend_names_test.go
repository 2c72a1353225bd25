package tavern

import (
	"net/http"
	"testing"

	"tavern/web"
)

// The spend page names a private table, not only its id.
func TestBudgetsNamePrivateTables(t *testing.T) {
	s := startOp(t, testConfig(t))
	_, tok := s.player("Ann")
	var tb map[string]any
	if st := s.call("POST", "/api/tables", tok, map[string]any{"name": "Hidden hall", "private": true, "combat_mode": "narrative"}, &tb); st != http.StatusCreated {
		t.Fatalf("new table: %d %v", st, tb)
	}
	id := tb["id"].(string)
	if st := s.call("PUT", "/api/admin/tables/"+id+"/budget", "admin", map[string]any{"usd_per_day": 1}, nil); st != http.StatusOK {
		t.Fatalf("set budget: %d", st)
	}
	var b web.Budgets
	if st := s.call("GET", "/api/admin/budgets", "admin", nil, &b); st != http.StatusOK {
		t.Fatalf("budgets: %d", st)
	}
	for _, row := range b.Tables {
		if row.TableID == id {
			if row.Name != "Hidden hall" {
				t.Errorf("row %+v: name %q, want %q", row, row.Name, "Hidden hall")
			}
			return
		}
	}
	t.Errorf("no row for %s in %+v", id, b.Tables)
}
