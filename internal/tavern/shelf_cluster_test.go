package tavern

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"tavern/internal/pgtest"
)

// TestShelfAcrossNodes: an adventure published through one node makes
// tables on another; once replaced there, the other node's new tables get
// the new version, and once hidden, the other node refuses it.
func TestShelfAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	a, b := opNode(t, url, 50*time.Millisecond), opNode(t, url, 50*time.Millisecond)
	_, tok := a.player("Ann")
	// The other node knows the shelf before the adventure is published.
	if st := b.call("POST", "/api/tables", tok, map[string]any{"name": "Before"}, nil); st != http.StatusCreated {
		t.Fatalf("a table on the other node: %d", st)
	}
	src, err := os.ReadFile("../../adventures/starter/rat-cellar.yaml")
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path string, body []byte) int {
		req, _ := http.NewRequest(method, a.srv.URL+path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/yaml")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	// eventually makes tables on b from rat-cellar until ok accepts the
	// status and the intro (a hang fails after a long safety bound).
	eventually := func(what string, ok func(status int, intro string) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var tb map[string]any
			st := b.call("POST", "/api/tables", tok, map[string]any{"name": "Rats", "adventure": "rat-cellar"}, &tb)
			intro := ""
			if st == http.StatusCreated {
				_, intro = get(t, b.srv.URL+"/api/tables/"+tb["id"].(string)+"/events?since=0")
			}
			if ok(st, intro) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other node answers %d, intro %.200s", what, st, intro)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	if st := send("POST", "/api/adventures", src); st != http.StatusCreated {
		t.Fatalf("publish: %d", st)
	}
	eventually("the published adventure", func(st int, intro string) bool {
		return st == http.StatusCreated && strings.Contains(intro, "Rain drums")
	})
	if st := send("PUT", "/api/adventures/rat-cellar", []byte(strings.Replace(string(src), "Rain drums", "Snow muffles", 1))); st != http.StatusOK {
		t.Fatalf("replace: %d", st)
	}
	eventually("the replaced adventure", func(st int, intro string) bool {
		return st == http.StatusCreated && strings.Contains(intro, "Snow muffles")
	})
	if st := send("DELETE", "/api/adventures/rat-cellar", nil); st/100 != 2 {
		t.Fatalf("hide: %d", st)
	}
	eventually("the hidden adventure", func(st int, _ string) bool { return st == http.StatusBadRequest })
}
