package tavern

import (
	"bytes"
	"database/sql"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// syncBuf is a log sink the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestConsoleUsers: the root token makes a viewer and a moderator; the
// viewer reads but gets 403 on every kind of moderation and on users; the
// moderator moderates, and the audit event and the log line name them;
// a revoked token signs nobody in; tokens are stored hashed only.
func TestConsoleUsers(t *testing.T) {
	cfg := testConfig(t)
	logs := &syncBuf{}
	cfg.LogOutput = logs
	s := startOp(t, cfg)
	_, tok := s.player("Ann")
	id := s.table(tok, "Moderated", "Bram", "")
	pid, _ := s.player("Bob")

	made := map[string]string{}
	ids := map[string]string{}
	for _, u := range []struct{ name, role string }{{"Vera", "viewer"}, {"Mara", "moderator"}} {
		var out map[string]any
		if st := s.call("POST", "/api/admin/users", "admin", map[string]string{"name": u.name, "role": u.role}, &out); st != http.StatusCreated {
			t.Fatalf("make %s: %d %v", u.name, st, out)
		}
		made[u.role], ids[u.role] = out["token"].(string), out["id"].(string)
		if made[u.role] == "" || out["role"] != u.role {
			t.Fatalf("made %v", out)
		}
	}
	if st := s.call("POST", "/api/admin/users", "admin", map[string]string{"name": "X", "role": "root"}, nil); st != http.StatusBadRequest {
		t.Errorf("role root: %d, want 400", st)
	}
	viewer, mod := made["viewer"], made["moderator"]

	for _, r := range []struct{ method, path string }{{"GET", "/api/admin/tables"}, {"GET", "/api/admin/overview"}, {"GET", "/api/admin/alerts"},
		{"GET", "/api/admin/players"}, {"GET", "/api/admin/budgets"}, {"GET", "/metrics"}} {
		if st := s.call(r.method, r.path, viewer, nil, nil); st != http.StatusOK {
			t.Errorf("viewer %s %s: %d, want 200", r.method, r.path, st)
		}
	}
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/admin/tables/" + id + "/pause", nil},
		{"DELETE", "/api/admin/tables/" + id, nil},
		{"PUT", "/api/admin/tables/" + id + "/budget", map[string]any{"usd_per_day": 1}},
		{"POST", "/api/admin/players/" + pid + "/ban", nil},
		{"DELETE", "/api/admin/players/" + pid, nil},
		{"POST", "/api/admin/ask", map[string]string{"question": "how many tables?"}},
		{"POST", "/api/admin/users", map[string]string{"name": "Y", "role": "viewer"}},
		{"GET", "/api/admin/users", nil},
	} {
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		if st := s.call(r.method, r.path, viewer, r.body, &e); st != http.StatusForbidden || e.Error.Code != "forbidden" {
			t.Errorf("viewer %s %s: %d %+v, want 403 forbidden", r.method, r.path, st, e)
		}
	}
	if st := s.call("GET", "/api/admin/users", mod, nil, nil); st != http.StatusForbidden {
		t.Errorf("a moderator lists users: %d, want 403 (root only)", st)
	}

	ws := s.dial(id, "", "spectator").joined()
	if st := s.call("POST", "/api/admin/tables/"+id+"/pause", mod, nil, nil); st != http.StatusNoContent {
		t.Fatalf("moderator pause: %d", st)
	}
	ev := ws.await("the pause's audit event", event("system", func(f map[string]any) bool {
		d, _ := f["data"].(map[string]any)
		return d["code"] == "moderation" && d["action"] == "pause"
	}))
	if d := ev["data"].(map[string]any); d["by"] != "Mara" {
		t.Errorf("audit event %v: want by Mara", d)
	}
	if !strings.Contains(logs.String(), "by=Mara") {
		t.Error("no log line names Mara")
	}

	if st := s.call("DELETE", "/api/admin/users/"+ids["viewer"], "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	if st := s.call("GET", "/api/admin/tables", viewer, nil, nil); st != http.StatusUnauthorized {
		t.Errorf("a revoked token: %d, want 401", st)
	}
	var list struct {
		Users []struct {
			Name      string  `json:"name"`
			RevokedAt *string `json:"revoked_at"`
		} `json:"users"`
	}
	s.call("GET", "/api/admin/users", "admin", nil, &list)
	if len(list.Users) != 2 {
		t.Fatalf("users %+v", list)
	}

	s.srv.Close()
	s.tv.Close()
	raw, err := sql.Open("sqlite", "file:"+cfg.DB+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, tok := range []string{viewer, mod} {
		if where := searchEveryColumn(t, raw, tok); len(where) > 0 {
			t.Errorf("a console token is stored in clear in %v", where)
		}
	}
}
