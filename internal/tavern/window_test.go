package tavern

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// TestNewRefusesWindow: New refuses a history window that cannot hold a
// turn, names the setting, and leaves nothing behind (no database file).
func TestNewRefusesWindow(t *testing.T) {
	cfg := testConfig(t)
	cfg.HistoryMin, cfg.HistoryMax = 2, 2
	tv, err := New(context.Background(), cfg)
	if err == nil {
		tv.Close()
		t.Fatal("New accepted a window of 2 messages")
	}
	if !strings.Contains(err.Error(), "history-min-messages 2") || !strings.Contains(err.Error(), "TAVERN_HISTORY_MIN_MESSAGES") {
		t.Errorf("err %q, want one naming the setting", err)
	}
	if _, serr := os.Stat(cfg.DB); !os.IsNotExist(serr) {
		t.Errorf("database file %s made by a refused start (%v)", cfg.DB, serr)
	}
}

// windowSpy is the offline narrator recording, for each narrative call,
// how many past turns it was sent and whether a memory summary came with
// them.
type windowSpy struct {
	offline.Narrator
	mu   sync.Mutex
	past []int
	mems []bool
}

func (s *windowSpy) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	if req.Agent == engine.AgentNarrative && len(req.Messages) > 0 {
		now := req.Messages[len(req.Messages)-1].Turn
		turns, mem := map[int]bool{}, false
		for _, m := range req.Messages {
			switch {
			case m.Role == "system":
				mem = mem || strings.HasPrefix(m.Content, "Memories of earlier play")
			case m.Turn != now:
				turns[m.Turn] = true
			}
		}
		s.mu.Lock()
		s.past, s.mems = append(s.past, len(turns)), append(s.mems, mem)
		s.mu.Unlock()
	}
	return s.Narrator.Complete(ctx, req)
}

// TestConfiguredWindow: the window settings are what the agents see. With
// the smallest window (3 messages: one whole turn) every narrative call is
// sent one past turn at most, and the older ones come back as a memory;
// the defaults' window (10 to 20 messages) holds several of these turns.
func TestConfiguredWindow(t *testing.T) {
	cases := []struct {
		name       string
		min, max   int
		most       int  // the most past turns one call is sent
		atLeast    bool // most is a floor, not a ceiling
		memoryLast bool // whether the last call sees a memory
	}{
		{"one turn", 3, 3, 1, false, true},
		{"defaults", 10, 20, 3, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spy := &windowSpy{}
			cfg := testConfig(t)
			cfg.Narrator, cfg.HistoryMin, cfg.HistoryMax = spy, c.min, c.max
			cfg.Hub = func(hc *hub.Config) { hc.Seed = func() uint64 { return 7 } }
			tv, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tv.Close()
			playTurns(t, tv.Hub, 5)

			spy.mu.Lock()
			past, mems := spy.past, spy.mems
			spy.mu.Unlock()
			if len(past) < 5 {
				t.Fatalf("%d narrative calls, want at least 5", len(past))
			}
			most := 0
			for _, n := range past {
				most = max(most, n)
			}
			if c.atLeast && most < c.most || !c.atLeast && most > c.most {
				t.Errorf("past turns per call %v: most %d, want %d (at least: %v)", past, most, c.most, c.atLeast)
			}
			if got := mems[len(mems)-1]; got != c.memoryLast {
				t.Errorf("last call saw a memory: %v, want %v (calls %v)", got, c.memoryLast, mems)
			}
		})
	}
}

// playTurns seats a player at a new table and plays n actions over the
// table's websocket, each narrated before the next.
func playTurns(t *testing.T, h *hub.Hub, n int) {
	t.Helper()
	ctx := context.Background()
	ann := engine.Player{ID: "p-ann", Name: "Ann"}
	table, err := h.CreateTable(ctx, ann, hub.TableSpec{Name: "Window"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sit(ctx, table.ID, ann, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeWS(w, r, table.ID, &ann)
	}))
	defer srv.Close()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"?role=player",
		&websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	type frame struct {
		Type, ID, Kind string
		Data           struct {
			ActionID string `json:"action_id"`
		}
	}
	read := func() frame {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var f frame
		if err := json.Unmarshal(msg, &f); err != nil {
			t.Fatal(err)
		}
		if f.Type == "error" {
			t.Fatalf("server error: %s", msg)
		}
		return f
	}
	for read().Type != "snapshot" {
	}
	// The arrival, queued at the seat, is narrated first: an act sent
	// before it would be refused as busy.
	arrival, err := h.StartSession(ctx, table.ID, ann)
	if engine.ErrorCode(err) == engine.ECONFLICT {
		arrival = "" // narrated already
	} else if err != nil {
		t.Fatal(err)
	}
	for arrival != "" {
		if f := read(); f.Kind == "narration" && f.Data.ActionID == arrival {
			break
		}
	}
	for i := range n {
		b, _ := json.Marshal(map[string]string{"type": "act", "id": "a" + strconv.Itoa(i), "text": "I look around the square"})
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		action := ""
		for {
			f := read()
			if f.Kind == "action" && action == "" {
				action = f.Data.ActionID
			}
			if f.Kind == "narration" && action != "" && f.Data.ActionID == action {
				break
			}
		}
	}
}
