package tavern

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// opServer is a running Tavern for the operator's tests, with the admin
// token "admin".
type opServer struct {
	t   *testing.T
	tv  *Tavern
	srv *httptest.Server
}

func startOp(t *testing.T, cfg Config) *opServer {
	t.Helper()
	cfg.AdminToken = "admin"
	tv, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(tv.Handler)
	t.Cleanup(func() {
		srv.Close()
		tv.Close()
	})
	return &opServer{t: t, tv: tv, srv: srv}
}

// call sends method path with body (JSON unless nil) and token (Bearer),
// and decodes a JSON answer into out (if not nil). It returns the status.
func (s *opServer) call(method, path, token string, body, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.srv.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %d %.300s: %v", method, path, res.StatusCode, b, err)
		}
	}
	return res.StatusCode
}

// player makes a player named name and returns its id and token.
func (s *opServer) player(name string) (id, token string) {
	s.t.Helper()
	var p struct{ PlayerID, Token string }
	var raw map[string]any
	if st := s.call("POST", "/api/players", "", map[string]string{"name": name}, &raw); st != http.StatusCreated {
		s.t.Fatalf("new player %s: %d %v", name, st, raw)
	}
	p.PlayerID, _ = raw["player_id"].(string)
	p.Token, _ = raw["token"].(string)
	return p.PlayerID, p.Token
}

// table makes a table owned by token's player and seats them with a
// character of that backstory; it returns the table id.
func (s *opServer) table(token, name, character, backstory string) string {
	s.t.Helper()
	var tb map[string]any
	if st := s.call("POST", "/api/tables", token, map[string]any{"name": name, "seats": 2}, &tb); st != http.StatusCreated {
		s.t.Fatalf("new table: %d %v", st, tb)
	}
	id := tb["id"].(string)
	s.sit(token, id, character, backstory)
	return id
}

func (s *opServer) sit(token, tableID, character, backstory string) {
	s.t.Helper()
	var out map[string]any
	if st := s.call("POST", "/api/tables/"+tableID+"/seats", token,
		map[string]any{"character": map[string]string{"name": character, "class": "warrior", "backstory": backstory}}, &out); st != http.StatusCreated {
		s.t.Fatalf("sit at %s: %d %v", tableID, st, out)
	}
}

// wsClient is a websocket of the tests, its frames read into a channel.
type wsClient struct {
	t      *testing.T
	c      *websocket.Conn
	frames chan map[string]any
	closed chan websocket.CloseError
}

func (s *opServer) dial(tableID, token, role string) *wsClient {
	s.t.Helper()
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	u := "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws/tables/" + tableID + "?role=" + role
	c, _, err := websocket.Dial(context.Background(), u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}, HTTPHeader: hdr})
	if err != nil {
		s.t.Fatalf("dial %s: %v", tableID, err)
	}
	c.SetReadLimit(8 << 20)
	w := &wsClient{t: s.t, c: c, frames: make(chan map[string]any, 4096), closed: make(chan websocket.CloseError, 1)}
	go func() {
		defer close(w.frames)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					w.closed <- ce
				}
				return
			}
			var f map[string]any
			if json.Unmarshal(b, &f) == nil {
				w.frames <- f
			}
		}
	}()
	s.t.Cleanup(func() { c.CloseNow() })
	return w
}

func (w *wsClient) send(v any) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

// await returns the first frame match accepts, failing after a long
// safety bound (a hang, not a timing assertion).
// joined waits for the socket's welcome: from then on, the table's events
// reach it (a dial returns before the table has taken the socket in, and
// an event committed meanwhile is in its snapshot, not a frame of its own).
func (w *wsClient) joined() *wsClient {
	w.t.Helper()
	w.await("the welcome", func(f map[string]any) bool { return f["type"] == "welcome" })
	return w
}

func (w *wsClient) await(what string, match func(map[string]any) bool) map[string]any {
	w.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				w.t.Fatalf("socket closed while waiting for %s", what)
			}
			if match(f) {
				return f
			}
		case <-deadline:
			w.t.Fatalf("no %s", what)
		}
	}
}

// event matches an event frame of kind whose data satisfies more (nil:
// any).
func event(kind string, more func(map[string]any) bool) func(map[string]any) bool {
	return func(f map[string]any) bool {
		if f["type"] != "event" || f["kind"] != kind {
			return false
		}
		return more == nil || more(f)
	}
}

func timeNow() time.Time { return time.Now() }

// settle waits until table id has no open action: every turn it queued
// has played (a hang fails after a long safety bound, not a timing
// assertion).
func (s *opServer) settle(id string) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var tables struct {
			Tables []struct {
				ID      string `json:"id"`
				Pending []any  `json:"pending"`
			} `json:"tables"`
		}
		s.call("GET", "/api/admin/tables", "admin", nil, &tables)
		open := false
		for _, row := range tables.Tables {
			if row.ID == id && len(row.Pending) > 0 {
				open = true
			}
		}
		if !open {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("table %s never settled", id)
}
