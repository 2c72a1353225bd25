package tavern

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"

	"tavern/internal/hub"
	"tavern/internal/pgtest"
)

// opNode is a node of a cluster on database url, served on its own
// listener (so the other nodes reach it), with the admin token "admin".
func opNode(t *testing.T, url string, renew time.Duration) *opServer {
	t.Helper()
	tv := node(t, url, func(c *Config) {
		c.LeaseRenew, c.LeaseTTL, c.AdminToken = renew, max(time.Hour, 2*renew), "admin"
	})
	return &opServer{t: t, tv: tv, srv: &httptest.Server{URL: tv.URL()}}
}

// closedWithin waits for w's close (a hang fails after a long safety
// bound, not a timing assertion).
func closedWithin(t *testing.T, w *wsClient, what string) websocket.CloseError {
	t.Helper()
	select {
	case ce := <-w.closed:
		return ce
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the socket stays open", what)
		return websocket.CloseError{}
	}
}

// TestBanAcrossNodes: a ban taken by one node closes the player's socket
// on the node that runs their table (4003, the ban's reason) and they sit
// nowhere; once the ban is lifted on the first node, the other lets them
// back.
func TestBanAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	a, b := opNode(t, url, 50*time.Millisecond), opNode(t, url, 50*time.Millisecond)
	pid, tok := b.player("Quillithorn")
	id := b.table(tok, "Lanterns", "Bram", "")
	ws := b.dial(id, tok, "player")
	ws.await("the first frame", func(map[string]any) bool { return true })

	if st := a.call("POST", "/api/admin/players/"+pid+"/ban", "admin", map[string]string{"reason": "spam"}, nil); st != http.StatusNoContent {
		t.Fatalf("ban on the first node: %d", st)
	}
	if ce := closedWithin(t, ws, "after a ban on another node"); ce.Code != hub.CloseFreed || ce.Reason != hub.ReasonServerBan {
		t.Errorf("socket closed with %d %q, want 4003 %q", ce.Code, ce.Reason, hub.ReasonServerBan)
	}
	_, other := b.player("Bob")
	var tb map[string]any
	b.call("POST", "/api/tables", other, map[string]any{"name": "Bob's"}, &tb)
	if st := b.call("POST", "/api/tables/"+tb["id"].(string)+"/seats", tok, map[string]any{"character": map[string]string{"name": "X"}}, nil); st != http.StatusUnauthorized {
		t.Errorf("a banned player sits on the other node: %d, want 401", st)
	}

	if st := a.call("DELETE", "/api/admin/players/"+pid+"/ban", "admin", nil, nil); st != http.StatusNoContent {
		t.Fatalf("unban: %d", st)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		w := b.dial(id, tok, "player")
		select {
		case <-w.frames:
			return // served: the other node lifted its refusal
		case ce := <-w.closed:
			if time.Now().After(deadline) {
				t.Fatalf("after the unban the other node still closes the socket: %d %q", ce.Code, ce.Reason)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestEraseAcrossNodes: a player erased through one node while another
// runs their table leaves nothing of theirs in the database once that
// node has played a turn there: not their name, their chat or their
// backstory, in any column. With the other node's own look at the
// erasures (poll), and without it (fence: a renewal an hour away), where
// only the store's fence stops the old state in memory from being
// written back.
func TestEraseAcrossNodes(t *testing.T) {
	for _, c := range []struct {
		name  string
		renew time.Duration
	}{{"poll", 50 * time.Millisecond}, {"fence", time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			url := pgtest.URL(t)
			a, b := opNode(t, url, 50*time.Millisecond), opNode(t, url, c.renew)
			const name, chat, backstory = "Quillithorn", "zebra xylophone chat", "my sister Elira keeps the lighthouse"
			pid, tok := b.player(name)
			_, other := b.player("Bob")
			id := b.table(tok, "Lanterns", "Bram", backstory)
			b.sit(other, id, "Cora", "")
			ws := b.dial(id, tok, "player")
			ws.send(map[string]any{"type": "say", "id": "c1", "text": chat})
			ws.await("the chat ack", func(f map[string]any) bool { return f["type"] == "ack" && f["id"] == "c1" })
			b.settle(id)

			if st := a.call("DELETE", "/api/admin/players/"+pid, "admin", nil, nil); st != http.StatusNoContent {
				t.Fatalf("erase on the first node: %d", st)
			}
			// A turn on the node that runs the table; a socket closed 1012
			// (the table fenced and reloaded) reconnects and acts again.
			for i := 0; ; i++ {
				if i == 20 {
					t.Fatal("no turn played after the erasure")
				}
				bob := b.dial(id, other, "player")
				bob.send(map[string]any{"type": "act", "id": fmt.Sprint("a", i), "text": "look around"})
				acked := make(chan bool, 1)
				go func() {
					for f := range bob.frames {
						if f["type"] == "ack" && f["id"] == fmt.Sprint("a", i) {
							acked <- true
							return
						}
					}
					acked <- false
				}()
				if <-acked {
					break
				}
			}
			b.settle(id)
			a.tv.Close()
			b.tv.Close()

			conn, err := pgx.Connect(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			for _, needle := range []string{name, chat, backstory} {
				if where := searchEveryPGColumn(t, conn, needle); len(where) > 0 {
					t.Errorf("%q is still in %v", needle, where)
				}
			}
		})
	}
}

// searchEveryPGColumn returns the table.column of every column of every
// table of the public schema that holds needle in its text.
func searchEveryPGColumn(t *testing.T, conn *pgx.Conn, needle string) []string {
	t.Helper()
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT c.table_name, c.column_name FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var cols [][2]string
	for rows.Next() {
		var tb, c string
		if err := rows.Scan(&tb, &c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, [2]string{tb, c})
	}
	rows.Close()
	var where []string
	for _, c := range cols {
		var n int
		q := fmt.Sprintf(`SELECT COUNT(*) FROM %q WHERE strpos(%q::text, $1) > 0`, c[0], c[1])
		if err := conn.QueryRow(ctx, q, needle).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n > 0 {
			where = append(where, c[0]+"."+c[1])
		}
	}
	return where
}
