package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/internal/store"
	"tavern/internal/tavern"
)

// env is a running Tavern: a real SQLite file, a hub with the offline
// narrator (or another model), and an httptest server routing websockets.
type env struct {
	t       *testing.T
	dbPath  string
	tv      *tavern.Tavern
	store   *db.DB
	hub     *hub.Hub
	srv     *httptest.Server
	mu      sync.Mutex
	players map[string]*engine.Player // token → player
	model   agent.Model
	seed    uint64
	// tune, if set, adjusts the hub's config at every open (a test's clock).
	tune func(*hub.Config)
}

type tlogWriter struct{ t *testing.T }

func (w tlogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func newEnv(t *testing.T, seed uint64) *env {
	t.Helper()
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tavern.db"), players: map[string]*engine.Player{}, model: offline.Narrator{}, seed: seed}
	e.serve()
	return e
}

// serve opens the hub and serves its websockets on a test server, both
// closed when the test ends.
func (e *env) serve() {
	e.open()
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/tables/{id}", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		p := e.players[r.URL.Query().Get("token")]
		h := e.hub
		e.mu.Unlock()
		h.ServeWS(w, r, r.PathValue("id"), p)
	})
	e.srv = httptest.NewServer(mux)
	e.t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.shutdown()
		e.srv.Close()
	})
}

// open (re)opens the store and starts a hub on it.
func (e *env) open() {
	e.t.Helper()
	seed := e.seed
	tv := openTavern(e.t, e.dbPath, &agent.Runner{Narrative: e.model, Combat: e.model}, func(c *hub.Config) {
		c.Seed, c.ShutdownGrace = func() uint64 { return seed }, 2*time.Second
		if e.tune != nil {
			e.tune(c)
		}
	})
	e.mu.Lock()
	e.tv, e.store, e.hub = tv, tv.Store, tv.Hub
	e.mu.Unlock()
}

// shutdown stops the hub and closes the store (like a stop of the server).
func (e *env) shutdown() {
	e.mu.Lock()
	tv := e.tv
	e.mu.Unlock()
	if tv != nil {
		tv.Close()
	}
}

// openTavern builds a Tavern as the server does (internal/tavern) on the
// SQLite file at path, with runner as its game master, tables never
// evicted, and tune's changes to the hub's config; its logs from warnings
// up go to the test's log. Its hub runs; it does not listen, so tests
// serve the hub's websockets as they need. The caller closes it.
func openTavern(tb testing.TB, path string, runner *agent.Runner, tune func(*hub.Config)) *tavern.Tavern {
	tb.Helper()
	cfg := tavern.DefaultConfig()
	cfg.DB, cfg.EvictAfter, cfg.Runner, cfg.Hub = path, 0, runner, tune
	if t, ok := tb.(*testing.T); ok {
		cfg.LogOutput, cfg.LogLevel = tlogWriter{t}, slog.LevelWarn
	}
	tv, err := tavern.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return tv
}

func (e *env) player(name string) (*engine.Player, string) {
	p := &engine.Player{ID: "p-" + strings.ToLower(name), Name: name}
	tok := "tok-" + p.ID
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.players[tok]; !ok {
		if err := e.store.CreatePlayer(context.Background(), *p, []byte(tok)); err != nil {
			e.t.Fatal(err)
		}
	}
	e.players[tok] = p
	return p, tok
}

func (e *env) table(spec hub.TableSpec) string {
	e.t.Helper()
	owner, _ := e.player("Owner")
	if spec.Name == "" {
		spec.Name = "Test table"
	}
	ts, err := e.hub.CreateTable(context.Background(), *owner, spec)
	if err != nil {
		e.t.Fatal(err)
	}
	return ts.ID
}

func (e *env) sit(tableID string, p *engine.Player, name, class string) hub.Character {
	e.t.Helper()
	c, err := e.hub.Sit(context.Background(), tableID, *p, engine.NewCharacterSpec{Name: name, Class: class})
	if err != nil {
		e.t.Fatal(err)
	}
	e.arrive(tableID, p) // the player acts after the DM's arrival line
	return c
}

// arrive waits until p's character has arrived: its session start, queued
// when it sat, narrated. Tests that count turns, or that expect the next
// narration to answer their own action, call it before acting.
func (e *env) arrive(tableID string, p *engine.Player) {
	e.t.Helper()
	awaitArrival(e.t, e.hub, tableID, *p)
}

func awaitArrival(tb testing.TB, h *hub.Hub, tableID string, p engine.Player) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := h.StartSession(ctx, tableID, p)
	if engine.ErrorCode(err) == engine.ECONFLICT {
		return // arrived already
	}
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := h.Subscribe(ctx, tableID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	for ev := range evs {
		if d, ok := ev.Data.(engine.NarrationData); ok && d.ActionID == id {
			return
		}
	}
	tb.Fatalf("%s never arrived at %s", p.Name, tableID)
}

// frame is any server frame.
type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Status  string          `json:"status"`
	Seq     int64           `json:"seq"`
	Kind    string          `json:"kind"`
	Turn    string          `json:"turn"`
	Data    json.RawMessage `json:"data"`
	Raw     json.RawMessage `json:"-"`
	// CannotSave is the state's notice while the store cannot write.
	CannotSave string `json:"cannot_save"`
}

// wsClient is a real websocket client that records every frame.
type wsClient struct {
	t      *testing.T
	name   string
	conn   *websocket.Conn
	frames chan frame
	closed chan error
	events []frame // every event received, in order
	// backlog holds frames read but not yet matched by until, in order.
	backlog []frame
}

func (e *env) dial(tableID, role, token string, since int64) *wsClient {
	e.t.Helper()
	u := strings.Replace(e.srv.URL, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=" + role
	if token != "" {
		u += "&token=" + token
	}
	if since >= 0 {
		u += fmt.Sprintf("&since=%d", since)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		e.t.Fatalf("dial %s: %v", u, err)
	}
	if conn.Subprotocol() != "tavern.v1" {
		e.t.Errorf("subprotocol %q", conn.Subprotocol())
	}
	_ = resp
	c := &wsClient{t: e.t, name: role + ":" + token, conn: conn, frames: make(chan frame, 4096), closed: make(chan error, 1)}
	go func() {
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				c.closed <- err
				close(c.frames)
				return
			}
			var f frame
			if err := json.Unmarshal(data, &f); err != nil {
				c.closed <- err
				close(c.frames)
				return
			}
			f.Raw = data
			c.frames <- f
		}
	}()
	e.t.Cleanup(func() { conn.Close(websocket.StatusNormalClosure, "") })
	return c
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("%s: write: %v", c.name, err)
	}
}

// next returns the next frame, failing the test after a timeout.
func (c *wsClient) next() frame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.t.Fatalf("%s: connection closed: %v", c.name, <-c.closed)
		}
		if f.Type == "event" {
			c.events = append(c.events, f)
		}
		return f
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: no frame within 10s", c.name)
	}
	return frame{}
}

// until returns the first frame, from the backlog then the socket, for
// which pred holds; frames passed over stay in the backlog.
func (c *wsClient) until(what string, pred func(frame) bool) frame {
	c.t.Helper()
	for i, f := range c.backlog {
		if pred(f) {
			c.backlog = append(c.backlog[:i:i], c.backlog[i+1:]...)
			return f
		}
	}
	for range 5000 {
		f := c.next()
		if pred(f) {
			return f
		}
		c.backlog = append(c.backlog, f)
	}
	c.t.Fatalf("%s: never saw %s", c.name, what)
	return frame{}
}

func (c *wsClient) event(kind string) frame {
	c.t.Helper()
	return c.until("event "+kind, func(f frame) bool { return f.Type == "event" && f.Kind == kind })
}

// act sends an act and returns the ack or error frame answering it. Like
// a well-behaved client it backs off and retries (same id) when rate
// limited.
func (c *wsClient) act(id, text string) frame {
	c.t.Helper()
	for try := 0; ; try++ {
		c.send(map[string]string{"type": "act", "id": id, "text": text})
		f := c.until("answer to "+id, func(f frame) bool { return (f.Type == "ack" || f.Type == "error") && f.ID == id })
		if f.Code != "rate_limited" || try == 20 {
			return f
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// startFight walks the party to the old mill and attacks Snikket, and
// returns once the fight has started.
func (c *wsClient) startFight() {
	c.t.Helper()
	c.act("m", "go to the old mill")
	c.event("narration")
	c.act("k", "attack Snikket")
	c.event("combat_started")
}

// closeStatus waits for the connection to close and returns its status.
func (c *wsClient) closeStatus() websocket.StatusCode {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				return websocket.CloseStatus(<-c.closed)
			}
		case <-deadline:
			c.t.Fatalf("%s: still open", c.name)
		}
	}
}

func dataOf(f frame) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(f.Data, &m)
	return m
}

func entryOf(f frame) string {
	if e, ok := dataOf(f)["entry"].(map[string]any); ok {
		s, _ := e["id"].(string)
		return s
	}
	return ""
}

// longTable makes a table of n events (chat lines 2…n after its opening),
// stored while the server was down, and starts the server again.
func (e *env) longTable(n int64) string {
	e.t.Helper()
	id := e.table(hub.TableSpec{})
	e.shutdown()
	ctx := context.Background()
	st, err := db.Open(ctx, e.dbPath)
	if err != nil {
		e.t.Fatal(err)
	}
	for seq := int64(2); seq <= n; seq++ {
		ev := engine.ChatEvent(engine.Player{ID: "p-owner", Name: "Owner"}, fmt.Sprintf("line %d", seq))
		ev.Seq, ev.TS = seq, time.Now().UTC()
		if err := st.Commit(ctx, store.Commit{TableID: id, Events: []engine.Event{ev}}); err != nil {
			e.t.Fatal(err)
		}
	}
	st.Close()
	e.open()
	return id
}

// seatAldric creates player p1 (Ann) and a table where Aldric, her
// warrior, sits: the benchmarks' one-player table.
func seatAldric(tb testing.TB, tv *tavern.Tavern) (tableID string, p engine.Player) {
	tb.Helper()
	ctx := context.Background()
	p = engine.Player{ID: "p1", Name: "Ann"}
	if err := tv.Store.CreatePlayer(ctx, p, []byte("tok")); err != nil {
		tb.Fatal(err)
	}
	ts, err := tv.Hub.CreateTable(ctx, p, hub.TableSpec{Name: "Bench"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := tv.Hub.Sit(ctx, ts.ID, p, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		tb.Fatal(err)
	}
	return ts.ID, p
}
