package tavern

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/pgtest"
)

// TestJoinThroughAnotherNode: an invite link opened on a node that does
// not run the table works as on its owner: the join page, a seat taken
// with the code, the table's page, and the player's and a watcher's
// sockets, all through the other node.
func TestJoinThroughAnotherNode(t *testing.T) {
	url := pgtest.URL(t)
	slow := func(c *Config) { c.LeaseRenew, c.LeaseTTL = time.Hour, 2*time.Hour }
	a, b := node(t, url, slow), node(t, url, slow)
	id, owner := seatedPlayer(t, a)
	var inv struct{ Code string }
	if code := postJSON(t, a.URL()+"/api/tables/"+id+"/invite", owner, nil, &inv); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("invite: %d %+v", code, inv)
	}
	req, _ := http.NewRequest("PATCH", a.URL()+"/api/tables/"+id, strings.NewReader(`{"private":true}`))
	req.Header.Set("Authorization", "Bearer "+owner)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("make private: %v %v", res.StatusCode, err)
	}
	res.Body.Close()

	if code, body := get(t, b.URL()+"/join/"+inv.Code); code != http.StatusOK || !strings.Contains(body, `data-table-id="`+id+`"`) {
		t.Fatalf("the join page through another node: %d %s", code, body)
	}
	if code, _ := get(t, b.URL()+"/join/not-a-code"); code != http.StatusNotFound {
		t.Errorf("an unknown invite through another node: %d, want 404", code)
	}
	var p map[string]any
	postJSON(t, b.URL()+"/api/players", "", map[string]any{"name": "Bob"}, &p)
	bob := p["token"].(string)
	sit := map[string]any{"character": map[string]any{"name": "Gil", "class": "rogue"}, "invite": inv.Code}
	var seat map[string]any
	if code := postJSON(t, b.URL()+"/api/tables/"+id+"/seats", bob, sit, &seat); code != http.StatusCreated {
		t.Fatalf("sit with the invite through another node: %d %v", code, seat)
	}
	if code, body := get(t, b.URL()+"/tables/"+id+"?invite="+inv.Code); code != http.StatusOK {
		t.Fatalf("the table page through another node: %d %s", code, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []string{"role=player&token=" + bob, "role=spectator&invite=" + inv.Code} {
		ws := "ws" + strings.TrimPrefix(b.URL(), "http") + "/ws/tables/" + id + "?" + q
		conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		_, data, err := conn.Read(ctx)
		conn.CloseNow()
		var f struct {
			Type string
			You  struct{ Role string }
		}
		json.Unmarshal(data, &f)
		if err != nil || f.Type != "welcome" {
			t.Errorf("%s through another node: %s %v, want a welcome", q, data, err)
		}
	}
	// Nothing of it moved the table: its owner still runs it.
	if owner, _, _, _, err := a.PG.Owner(ctx, id); err != nil || owner != a.PG.NodeID() {
		t.Errorf("the table's owner after the join: %q %v, want %s", owner, err, a.PG.NodeID())
	}
}
