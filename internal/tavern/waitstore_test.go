package tavern

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"

	"tavern/internal/pgtest"
)

// TestPostgresLateStart: a node whose PostgreSQL is down at start listens
// at once: /healthz 200, /readyz 503 saying the store is not reachable,
// the API 503 `unavailable` with Retry-After, sockets 1013; the log says
// where it tries (never the password) at each attempt. Once PostgreSQL
// starts, the same node serves with no restart and a table is made.
func TestPostgresLateStart(t *testing.T) {
	if _, err := pgtest.Binaries(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	ctx := context.Background()
	// Not t.TempDir: PostgreSQL runs as another user, who must reach it.
	dir, err := os.MkdirTemp("", "pglate")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pg, err := pgtest.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pg.CreateDatabase(ctx, "tavern"); err != nil {
		pg.Stop()
		t.Fatal(err)
	}
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t)
	logs := &syncBuf{}
	cfg.LogOutput = logs
	cfg.ClusterToken = "test-token"
	// The cluster trusts every local login; the password is there to be
	// kept out of the log.
	cfg.DB = strings.Replace(pg.URL("tavern"), "postgres@", "postgres:hush-hush@", 1)
	tv, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New with PostgreSQL down: %v", err)
	}
	defer tv.Close()
	if err := tv.Listen(); err != nil {
		t.Fatal(err)
	}
	go tv.Serve()

	if code, body := get(t, tv.URL()+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while waiting: %d %s", code, body)
	}
	if code, body := get(t, tv.URL()+"/readyz"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, `"code":"unavailable"`) || !strings.Contains(body, "the store is not reachable yet") {
		t.Errorf("/readyz while waiting: %d %s", code, body)
	}
	res, err := http.Post(tv.URL()+"/api/players", "application/json", strings.NewReader(`{"name":"Ann"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
		t.Errorf("POST /api/players while waiting: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	var p map[string]any
	if code := postJSON(t, tv.URL()+"/api/players", "", map[string]any{"name": "Ann"}, &p); code != http.StatusServiceUnavailable ||
		p["error"].(map[string]any)["code"] != "unavailable" {
		t.Errorf("the error body while waiting: %d %v", code, p)
	}
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(tv.URL(), "http")+"/ws/tables/x?role=spectator", &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("a socket while waiting: %v, want 1013", err)
	}
	select {
	case <-tv.Ready():
		t.Fatal("ready with PostgreSQL down")
	default:
	}

	pg, err = pgtest.Start(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Stop()
	select {
	case <-tv.Ready():
	case <-time.After(time.Minute):
		t.Fatalf("not ready a minute after PostgreSQL started; log:\n%s", logs)
	}
	if code, body := get(t, tv.URL()+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once PostgreSQL is up: %d %s", code, body)
	}
	if code := postJSON(t, tv.URL()+"/api/players", "", map[string]any{"name": "Ann"}, &p); code != http.StatusCreated {
		t.Fatalf("create player once PostgreSQL is up: %d %v", code, p)
	}
	var table map[string]any
	if code := postJSON(t, tv.URL()+"/api/tables", p["token"].(string), map[string]any{"name": "Late"}, &table); code != http.StatusCreated {
		t.Fatalf("create table: %d %v", code, table)
	}
	conn, err := pgx.Connect(ctx, pg.URL("tavern"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM tables WHERE name = 'Late'").Scan(&n); err != nil || n != 1 {
		t.Errorf("tables named Late in PostgreSQL: %d, %v", n, err)
	}

	log := logs.String()
	for _, want := range []string{"PostgreSQL is not reachable yet", "attempt=1", "db=" + dir + ":5432/tavern", "PostgreSQL is reachable: serving"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "hush-hush") {
		t.Errorf("the log shows the password:\n%s", log)
	}
}
