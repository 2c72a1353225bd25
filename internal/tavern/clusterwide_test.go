package tavern

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/pgtest"
)

// TestQuotaAcrossNodes: the table-creation quota of a client address
// counts what every node allowed: ten tables made over two nodes spend
// the burst, and the next is refused 429 with Retry-After on either; a
// table refused as invalid costs nothing.
func TestQuotaAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	tune := func(c *Config) {
		c.LeaseRenew, c.LeaseTTL = time.Hour, 2*time.Hour
		c.Quotas, c.QuotaTables = true, 1 // a burst of 10, then one a minute
	}
	nodes := []*Tavern{node(t, url, tune), node(t, url, tune)}
	var p map[string]any
	postJSON(t, nodes[0].URL()+"/api/players", "", map[string]any{"name": "Ann"}, &p)
	token := p["token"].(string)
	create := func(tv *Tavern, spec map[string]any) int {
		var out map[string]any
		return postJSON(t, tv.URL()+"/api/tables", token, spec, &out)
	}
	for i := range 10 {
		if i == 5 {
			if code := create(nodes[1], map[string]any{"name": "Bad", "ruleset": "d7"}); code != http.StatusBadRequest {
				t.Fatalf("an invalid table: %d, want 400", code)
			}
		}
		if code := create(nodes[i%2], map[string]any{"name": "T" + strconv.Itoa(i)}); code != http.StatusCreated {
			t.Fatalf("table %d on node %d: %d, want 201", i, i%2, code)
		}
	}
	for i, tv := range nodes {
		req, _ := http.NewRequest("POST", tv.URL()+"/api/tables", strings.NewReader(`{"name":"One too many"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
			t.Errorf("the eleventh table on node %d: %d, Retry-After %q, want 429 with one", i, res.StatusCode, res.Header.Get("Retry-After"))
		}
	}
}

// TestOverviewAcrossNodes: the operator's overview, asked of any node,
// adds up every node's sockets and active tables (their rows), not only
// the tables the asked node runs.
func TestOverviewAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	quick := func(c *Config) { c.LeaseRenew, c.LeaseTTL = 50*time.Millisecond, time.Hour }
	a, b := node(t, url, quick), node(t, url, quick)
	idA, tokA := seatedPlayer(t, a)
	idB, _ := seatedPlayer(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, ws := range []string{
		"ws" + strings.TrimPrefix(a.URL(), "http") + "/ws/tables/" + idA + "?role=player&token=" + tokA,
		"ws" + strings.TrimPrefix(a.URL(), "http") + "/ws/tables/" + idB + "?role=spectator", // passed on to b
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
	var o struct {
		Tables       int `json:"tables"`
		TablesActive int `json:"tables_active"`
		Connections  struct{ Players, Spectators int }
	}
	for _, tv := range []*Tavern{a, b} {
		for {
			getAdmin(t, tv, "/api/admin/overview", &o)
			if o.Tables == 2 && o.TablesActive == 2 && o.Connections.Players == 1 && o.Connections.Spectators == 1 {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("overview of %s: %+v, want 2 tables, 2 active, 1 player and 1 spectator", tv.URL(), o)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	// The console's pages say the same: the overview lists both nodes
	// alive with their leases, the tables page the node of each table.
	page := adminPage(t, a, "/admin")
	for _, tv := range []*Tavern{a, b} {
		addr := strings.TrimPrefix(tv.URL(), "http://")
		if !strings.Contains(page, `<td class="mono">`+addr+`</td>`) {
			t.Errorf("the overview does not list node %s:\n%s", addr, page)
		}
	}
	if n := strings.Count(page, `<span class="pill ok">alive</span>`); n != 2 || !strings.Contains(page, " s left</td>") {
		t.Errorf("the overview shows %d alive nodes, want 2, with their leases", n)
	}
	tables := adminPage(t, b, "/admin/tables")
	for _, tv := range []*Tavern{a, b} {
		if addr := strings.TrimPrefix(tv.URL(), "http://"); !strings.Contains(tables, ">on "+addr+"</span>") {
			t.Errorf("the tables page does not name node %s as a table's", addr)
		}
	}
}

// adminPage returns the operator's page at path on tv.
func adminPage(t *testing.T, tv *Tavern, path string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", tv.URL()+path, nil)
	req.Header.Set("Authorization", "Bearer "+tv.AdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %v", path, res.StatusCode, err)
	}
	return string(body)
}

// On a cluster the alert rules see the other nodes: a node whose lease
// lapsed (it stalled) is a critical "node missing" on the others, and
// what a node measures of its own (its store's commits) is alerted under
// its id, so that another node never clears it.
func TestAlertsAcrossNodes(t *testing.T) {
	url := pgtest.URL(t)
	tune := func(c *Config) {
		c.LeaseRenew, c.LeaseTTL = 50*time.Millisecond, time.Hour
		c.AlertCommitP95 = time.Nanosecond // every commit is slower
	}
	// b renews its lease once an hour: it stays stalled (a node that
	// notices registers anew at its address, which is not missing).
	a, b := node(t, url, tune), node(t, url, func(c *Config) { tune(c); c.LeaseRenew, c.LeaseTTL = time.Hour, 2*time.Hour })
	seatedPlayer(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stalled := b.PG.NodeID()
	if _, err := b.PG.Pool().Exec(ctx, "UPDATE nodes SET expires_at = now() - interval '1 second' WHERE id = $1", stalled); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"node_missing:" + stalled: "critical", "store_commit_latency:" + a.PG.NodeID(): "critical"}
	for {
		var got struct {
			Alerts []struct{ ID, Severity, Summary string } `json:"alerts"`
		}
		getAdmin(t, a, "/api/admin/alerts", &got)
		found := 0
		for _, al := range got.Alerts {
			if sev, ok := want[al.ID]; ok && al.Severity == sev {
				found++
			}
			if strings.HasPrefix(al.ID, "store_commit_latency:") && !strings.HasSuffix(al.Summary, "(node "+a.PG.NodeID()+")") {
				t.Errorf("a node's own alert does not name it: %+v", al)
			}
		}
		if found == len(want) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("alerts on %s: %+v, want %v", a.URL(), got.Alerts, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
