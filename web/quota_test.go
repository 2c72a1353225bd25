package web_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"tavern/internal/hub"
	"tavern/web"
)

// newQuotaEnv is newTestEnv with the given quotas.
func newQuotaEnv(t *testing.T, q web.Quotas) *testEnv {
	t.Helper()
	return startEnv(t, envConfig{quotas: q})
}

// Creation quotas count per client address: past the burst, 429 with a
// Retry-After in whole seconds; TAVERN_QUOTAS=off (Quotas.Off) lifts them.
func TestCreationQuotas(t *testing.T) {
	t.Run("players", func(t *testing.T) {
		e := newQuotaEnv(t, web.Quotas{PlayersPerMinute: 1, PlayersBurst: 3})
		for i := range 3 {
			e.newPlayer(fmt.Sprintf("P%d", i))
		}
		r := e.do("POST", "/api/players", map[string]any{"name": "Fourth"}, "")
		wantError(t, r, http.StatusTooManyRequests, hub.CodeRateLimited)
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 60 {
			t.Errorf("Retry-After = %q, want 1..60 seconds", r.header.Get("Retry-After"))
		}
	})
	t.Run("tables", func(t *testing.T) {
		e := newQuotaEnv(t, web.Quotas{TablesPerMinute: 1, TablesBurst: 2})
		_, tok := e.newPlayer("Owner")
		for i := range 2 {
			if r := e.do("POST", "/api/tables", map[string]any{"name": fmt.Sprintf("T%d", i)}, tok); r.status != http.StatusCreated {
				t.Fatalf("table %d: %d %s", i, r.status, r.body)
			}
		}
		r := e.do("POST", "/api/tables", map[string]any{"name": "T3"}, tok)
		wantError(t, r, http.StatusTooManyRequests, hub.CodeRateLimited)
		if r.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		if n := len(e.hub.List()); n != 2 {
			t.Errorf("%d tables stored, want 2", n)
		}
	})
	t.Run("off", func(t *testing.T) {
		e := newQuotaEnv(t, web.Quotas{Off: true, PlayersPerMinute: 1, PlayersBurst: 1, TablesPerMinute: 1, TablesBurst: 1})
		_, tok := e.newPlayer("Owner")
		for i := range 30 {
			e.newPlayer(fmt.Sprintf("P%d", i))
			if r := e.do("POST", "/api/tables", map[string]any{"name": fmt.Sprintf("T%d", i)}, tok); r.status != http.StatusCreated {
				t.Fatalf("table %d: %d %s", i, r.status, r.body)
			}
		}
	})
}

// GET /api/tables pages with ?limit= and ?cursor= (additive); without
// them the whole list comes back and there is no next.
func TestListTablesPaged(t *testing.T) {
	e := newQuotaEnv(t, web.Quotas{Off: true})
	for i := range 7 {
		e.newTable(map[string]any{"name": fmt.Sprintf("T%d", i)})
	}
	all := e.do("GET", "/api/tables", nil, "").json(t)
	if n := len(all["tables"].([]any)); n != 7 {
		t.Fatalf("%d tables, want 7", n)
	}
	if _, ok := all["next"]; ok {
		t.Error("unpaged list has next")
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 4 {
			t.Fatal("more pages than tables")
		}
		path := "/api/tables?limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		m := e.do("GET", path, nil, "").json(t)
		ts := m["tables"].([]any)
		if len(ts) > 3 {
			t.Fatalf("page of %d, want at most 3", len(ts))
		}
		for _, x := range ts {
			seen = append(seen, x.(map[string]any)["id"].(string))
		}
		next, _ := m["next"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 7 {
		t.Fatalf("pages held %d tables, want 7", len(seen))
	}
	for i, x := range all["tables"].([]any) {
		if id := x.(map[string]any)["id"].(string); seen[i] != id {
			t.Errorf("paged order [%d] = %s, want %s", i, seen[i], id)
		}
	}
	wantError(t, e.do("GET", "/api/tables?limit=0", nil, ""), 400, hub.CodeBadRequest)
	wantError(t, e.do("GET", "/api/tables?cursor=t-nope", nil, ""), 400, hub.CodeBadRequest)
}
