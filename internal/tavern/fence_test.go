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

// node starts a Tavern on the shared PostgreSQL database url.
func node(t *testing.T, url string, tune func(*Config)) *Tavern {
	t.Helper()
	cfg := testConfig(t)
	cfg.DB, cfg.ClusterToken = url, "test-token"
	if tune != nil {
		tune(&cfg)
	}
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	go tv.Serve()
	t.Cleanup(func() { tv.Close() })
	return tv
}

// seatedPlayer creates a player, a table and a seat at it on tv.
func seatedPlayer(t *testing.T, tv *Tavern) (tableID, token string) {
	t.Helper()
	var p, table, seat map[string]any
	postJSON(t, tv.URL()+"/api/players", "", map[string]any{"name": "Ann"}, &p)
	token = p["token"].(string)
	if code := postJSON(t, tv.URL()+"/api/tables", token, map[string]any{"name": "Fenced"}, &table); code != http.StatusCreated {
		t.Fatalf("create table: %d %v", code, table)
	}
	tableID = table["id"].(string)
	sit := map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior", "backstory": "A miller's son."}}
	if code := postJSON(t, tv.URL()+"/api/tables/"+tableID+"/seats", token, sit, &seat); code >= 300 {
		t.Fatalf("sit: %d %v", code, seat)
	}
	return tableID, token
}

// TestTwoNodes: a table belongs to the node that created it; another node
// passes its requests to the owner while the owner lives, and answers 503
// to a request that was forwarded already. When the owner's lease lapses
// (a stalled process) the other node claims it, and the stale owner's
// next chat line is fenced: nothing is acknowledged, nothing written, and
// its socket closes 1012 so the client reconnects.
func TestTwoNodes(t *testing.T) {
	url := pgtest.URL(t)
	fast := func(c *Config) { c.LeaseRenew, c.LeaseTTL = time.Hour, 2*time.Hour }
	a, b := node(t, url, fast), node(t, url, fast)
	id, token := seatedPlayer(t, a)

	// Another node passes the request to the owner.
	if code, body := get(t, b.URL()+"/api/tables/"+id); code != http.StatusOK || !strings.Contains(body, "Aldric") {
		t.Fatalf("another node while the owner lives: %d %s", code, body)
	}
	// The operator sees both nodes, and which runs the table.
	var overview struct {
		Nodes []struct{ ID, State string }
	}
	getAdmin(t, b, "/api/admin/overview", &overview)
	if len(overview.Nodes) != 2 || overview.Nodes[0].State != "alive" || overview.Nodes[1].State != "alive" {
		t.Fatalf("overview nodes %+v, want two alive", overview.Nodes)
	}
	var list struct {
		Tables []struct {
			ID    string
			Owner *struct{ Node string }
		}
	}
	getAdmin(t, b, "/api/admin/tables", &list)
	rows := list.Tables
	if len(rows) != 1 || rows[0].Owner == nil || rows[0].Owner.Node != a.PG.NodeID() {
		t.Fatalf("admin rows %+v, want the table run by %s", rows, a.PG.NodeID())
	}

	// A request a node forwarded is never forwarded again.
	rt := &router{token: []byte("test-token")}
	req, _ := http.NewRequest("GET", b.URL()+"/api/tables/"+id, nil)
	rt.sign(req, "192.0.2.7:1234")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("a forwarded request at a node that does not own the table: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Through b, which passes the socket to a, byte for byte.
	wsURL := "ws" + strings.TrimPrefix(b.URL(), "http") + "/ws/tables/" + id + "?role=player&token=" + token
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	say := func(cid string) {
		b, _ := json.Marshal(map[string]string{"type": "say", "id": cid, "text": "hello " + cid})
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	// read returns the next frame's type and id.
	read := func() (string, string, error) {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return "", "", err
		}
		var f struct{ Type, ID string }
		json.Unmarshal(data, &f)
		return f.Type, f.ID, nil
	}
	say("s1")
	for {
		typ, fid, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if typ == "ack" && fid == "s1" {
			break
		}
	}
	var seq int64
	a.PG.Pool().QueryRow(ctx, "SELECT max(seq) FROM events WHERE table_id = $1", id).Scan(&seq)

	// a stalls past its lease: b claims the table.
	if _, err := a.PG.Pool().Exec(ctx, "UPDATE nodes SET expires_at = now() - interval '1 second' WHERE id = $1", a.PG.NodeID()); err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, b.URL()+"/api/tables/"+id); code != http.StatusOK {
		t.Fatalf("the new owner: %d %s", code, body)
	}
	say("s2")
	for {
		typ, fid, err := read()
		if err != nil {
			if code := websocket.CloseStatus(err); code != websocket.StatusServiceRestart {
				t.Fatalf("socket closed with %v (%v), want 1012", code, err)
			}
			break
		}
		if typ == "ack" && fid == "s2" {
			t.Fatal("the stale owner acknowledged a chat line")
		}
	}
	var after int64
	b.PG.Pool().QueryRow(ctx, "SELECT max(seq) FROM events WHERE table_id = $1", id).Scan(&after)
	if after != seq {
		t.Fatalf("events up to seq %d after the fence, want %d: the stale owner wrote", after, seq)
	}
}

// TestDrain: a node that closes hands its tables over: its sockets close
// 1012 once the table is released, and another node serves the table at
// once (no lease to wait for).
func TestDrain(t *testing.T) {
	url := pgtest.URL(t)
	slow := func(c *Config) { c.LeaseRenew, c.LeaseTTL = time.Hour, 2*time.Hour }
	a, b := node(t, url, slow), node(t, url, slow)
	id, token := seatedPlayer(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(a.URL(), "http") + "/ws/tables/" + id + "?role=player&token=" + token
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := conn.Read(ctx); err != nil {
				closed <- err
				return
			}
		}
	}()
	go a.Close()
	err = <-closed
	if code := websocket.CloseStatus(err); code != websocket.StatusServiceRestart {
		t.Fatalf("socket closed with %v (%v), want 1012", code, err)
	}
	start := time.Now()
	code, body := get(t, b.URL()+"/api/tables/"+id)
	if code != http.StatusOK || !strings.Contains(body, "Aldric") {
		t.Fatalf("the other node after the drain: %d %s", code, body)
	}
	t.Logf("served by the other node %s after the 1012", time.Since(start))
	if owner, _, _, _, _ := b.PG.Owner(ctx, id); owner != b.PG.NodeID() {
		t.Fatalf("owner %q, want %q", owner, b.PG.NodeID())
	}
}

// getAdmin reads an operator's JSON endpoint of tv into out.
func getAdmin(t *testing.T, tv *Tavern, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", tv.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+tv.AdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %v", path, res.StatusCode, err)
	}
}
