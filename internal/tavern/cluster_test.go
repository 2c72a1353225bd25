package tavern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"tavern/internal/db"
	"tavern/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestOneServerPerSQLiteFile: a second server on the same SQLite file
// refuses to start, naming the process that holds it; once the first has
// closed, it starts.
func TestOneServerPerSQLiteFile(t *testing.T) {
	cfg := testConfig(t)
	first, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), cfg)
	if !errors.Is(err, db.ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second server on one file: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.Close()
}

// postJSON posts body to url with the player's token and decodes the
// answer into out; it returns the status.
func postJSON(t *testing.T, url, token string, body, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %d %s", url, res.StatusCode, data)
		}
	}
	return res.StatusCode
}

// TestPostgresServes: with a postgres:// DB a server plays as on SQLite,
// and a second server on the same database (after the first) finds the
// player, the table and its seat.
func TestPostgresServes(t *testing.T) {
	cfg := testConfig(t)
	cfg.DB, cfg.ClusterToken = pgtest.URL(t), "test-token"
	serve := func() *Tavern {
		tv, err := New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := tv.Listen(); err != nil {
			t.Fatal(err)
		}
		go tv.Serve()
		return tv
	}
	tv := serve()
	var player struct{ PlayerID, Token string }
	var p map[string]any
	if code := postJSON(t, tv.URL()+"/api/players", "", map[string]any{"name": "Ann"}, &p); code != http.StatusCreated {
		t.Fatalf("create player: %d %v", code, p)
	}
	player.PlayerID, player.Token = p["player_id"].(string), p["token"].(string)
	var table map[string]any
	if code := postJSON(t, tv.URL()+"/api/tables", player.Token, map[string]any{"name": "On Postgres"}, &table); code != http.StatusCreated {
		t.Fatalf("create table: %d %v", code, table)
	}
	id := table["id"].(string)
	var seat map[string]any
	sit := map[string]any{"character": map[string]any{"name": "Aldric", "class": "warrior", "backstory": "A miller's son."}}
	if code := postJSON(t, tv.URL()+"/api/tables/"+id+"/seats", player.Token, sit, &seat); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("sit: %d %v", code, seat)
	}
	if err := tv.Close(); err != nil {
		t.Fatal(err)
	}

	tv = serve()
	defer tv.Close()
	code, body := get(t, tv.URL()+"/api/tables/"+id)
	if code != http.StatusOK || !strings.Contains(body, "Aldric") {
		t.Fatalf("the table after a restart: %d %s", code, body)
	}
	code, body = get(t, tv.URL()+"/api/tables/"+id+"/events?since=0")
	if code != http.StatusOK || !strings.Contains(body, `"seq":1`) {
		t.Fatalf("events after a restart: %d %s", code, body)
	}
}

// TestPostgresBadInput: a URL that does not parse and a database in
// another locale are refused with a sentence that says what to do; a
// wildcard address without TAVERN_NODE_ADDR is refused too.
func TestPostgresBadInput(t *testing.T) {
	cfg := testConfig(t)
	cfg.ClusterToken = "t"
	cfg.DB = "postgres://%zz"
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "does not parse") {
		t.Errorf("bad URL: %v", err)
	}
	cfg.DB = pgtest.URL(t)
	cfg.Addr = "0.0.0.0:0"
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "TAVERN_NODE_ADDR") {
		t.Errorf("wildcard without a node address: %v", err)
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.ClusterToken = ""
	if _, err := New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "TAVERN_CLUSTER_TOKEN") {
		t.Errorf("no cluster token: %v", err)
	}
}
