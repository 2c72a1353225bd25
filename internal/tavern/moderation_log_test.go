package tavern

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log output read while the server writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Every moderation of a player, and a console user's revocation, is
// logged naming who acted: the console user, not the root token.
func TestModerationLogNamesWhoActed(t *testing.T) {
	cfg := testConfig(t)
	var logs lockedBuffer
	cfg.LogOutput, cfg.LogLevel = &logs, slog.LevelInfo
	s := startOp(t, cfg)
	var mod, other struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	if st := s.call("POST", "/api/admin/users", "admin", map[string]string{"name": "mona", "role": "moderator"}, &mod); st != http.StatusCreated {
		t.Fatalf("new moderator: %d", st)
	}
	if st := s.call("POST", "/api/admin/users", "admin", map[string]string{"name": "vic", "role": "viewer"}, &other); st != http.StatusCreated {
		t.Fatalf("new viewer: %d", st)
	}
	pid, _ := s.player("Ann")
	for _, step := range []struct{ method, path, action string }{
		{"POST", "/api/admin/players/" + pid + "/ban", "action=ban"},
		{"DELETE", "/api/admin/players/" + pid + "/ban", "action=unban"},
		{"DELETE", "/api/admin/players/" + pid, "action=erase"},
	} {
		if st := s.call(step.method, step.path, mod.Token, nil, nil); st != http.StatusNoContent {
			t.Fatalf("%s %s: %d", step.method, step.path, st)
		}
		if !hasLogLine(logs.String(), "player="+pid, step.action, "by=mona") {
			t.Errorf("no log line of %s by mona:\n%s", step.action, logs.String())
		}
	}
	if st := s.call("DELETE", "/api/admin/users/"+other.ID, "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	if !hasLogLine(logs.String(), "console user revoked", "user="+other.ID, "by=root") {
		t.Errorf("no log line of the revocation by root:\n%s", logs.String())
	}
}

// hasLogLine reports whether one line of logs holds every part.
func hasLogLine(logs string, parts ...string) bool {
	for line := range strings.Lines(logs) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
