package tavern

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/pgtest"
)

// TestOnlineAcrossNodes: who is online, asked of any node, lists the
// players connected to every node; the node-to-node answer is refused to
// a client.
func TestOnlineAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	quick := func(c *Config) { c.LeaseRenew, c.LeaseTTL = 50*time.Millisecond, time.Hour }
	a, b := node(t, url, quick), node(t, url, quick)
	idA, tokA := seatedPlayer(t, a)
	idB, tokB := seatedPlayer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ws := range []string{
		"ws" + strings.TrimPrefix(a.URL(), "http") + "/ws/tables/" + idA + "?role=player&token=" + tokA,
		"ws" + strings.TrimPrefix(b.URL(), "http") + "/ws/tables/" + idB + "?role=player&token=" + tokB,
	} {
		conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		if _, _, err := conn.Read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, tv := range []*Tavern{a, b} {
		ps, err := tv.whoIsOnline(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range ps {
			if p.Role == "player" {
				seen[p.TableID] = true
			}
		}
		if !seen[idA] || !seen[idB] || len(ps) != 2 {
			t.Errorf("online asked of %s: %+v, want a player at %s and one at %s", tv.URL(), ps, idA, idB)
		}
	}
	if code, body := get(t, a.URL()+onlinePath); code == http.StatusOK {
		t.Errorf("a client reads who is online from the node-to-node path: %d %.200s", code, body)
	}
}
