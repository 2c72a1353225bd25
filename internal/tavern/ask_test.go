package tavern

import (
	"net/http"
	"strings"
	"testing"
)

// TestAskOnline: the offline analyst answers "who is online now" from
// the hub's live sockets, saying how it read the question.
func TestAskOnline(t *testing.T) {
	s := startOp(t, testConfig(t))
	_, tok := s.player("Ann")
	id := s.table(tok, "Live", "Bram", "")
	s.dial(id, tok, "player").joined()
	var reply struct {
		Answer string `json:"answer"`
		Steps  []struct {
			Rows [][]any `json:"rows"`
		} `json:"steps"`
	}
	if st := s.call("POST", "/api/admin/ask", "admin", map[string]string{"question": "who is online now?"}, &reply); st != http.StatusOK {
		t.Fatalf("ask: %d", st)
	}
	if !strings.HasPrefix(reply.Answer, "I read this as the players connected right now") || !strings.HasSuffix(reply.Answer, "1 player is connected right now.") {
		t.Errorf("answer %q", reply.Answer)
	}
	if len(reply.Steps) == 0 || len(reply.Steps[0].Rows) != 1 || reply.Steps[0].Rows[0][0] != "Ann" || reply.Steps[0].Rows[0][1] != "Live" {
		t.Errorf("steps %+v", reply.Steps)
	}
}
