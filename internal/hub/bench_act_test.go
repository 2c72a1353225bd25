package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// BenchmarkActTurn measures the act and turn path of one table: one
// iteration is a player's act, its ack, the action event and the
// narration of the turn that plays it (the offline narrator, so the model
// costs nothing), over a real websocket and a real SQLite store. Run it
// with a small -benchtime (10x): a player may send 30 frames at once.
func BenchmarkActTurn(b *testing.B) {
	ctx := context.Background()
	tv := openTavern(b, filepath.Join(b.TempDir(), "tavern.db"), &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}},
		func(c *hub.Config) { c.Seed, c.ShutdownGrace = func() uint64 { return 1 }, time.Second })
	defer tv.Close()
	h := tv.Hub
	tableID, p := seatAldric(b, tv)
	// The seat's session start plays first, off the clock.
	for {
		s, err := h.Snapshot(ctx, tableID)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Pending) == 0 && !s.Busy {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/tables/{id}", func(w http.ResponseWriter, r *http.Request) {
		h.ServeWS(w, r, r.PathValue("id"), &p)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer srv.CloseClientConnections()
	url := strings.Replace(srv.URL, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=player"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	// await reads frames until one of kind (an event) whose data's
	// action_id is id ("" for any), and returns that data's action_id.
	await := func(kind engine.Kind, id string) string {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for {
			_, data, err := c.Read(rctx)
			if err != nil {
				b.Fatalf("waiting for %s %q: %v", kind, id, err)
			}
			var f struct {
				Type, Kind, Code, Message string
				Data                      struct {
					ActionID string `json:"action_id"`
				}
			}
			if err := json.Unmarshal(data, &f); err != nil {
				b.Fatal(err)
			}
			if f.Type == "error" {
				b.Fatalf("act refused: %s %s", f.Code, f.Message)
			}
			if f.Type == "event" && f.Kind == string(kind) && (id == "" || f.Data.ActionID == id) {
				return f.Data.ActionID
			}
		}
	}
	cpu0 := processCPU(b)
	for i := 0; b.Loop(); i++ {
		msg, _ := json.Marshal(map[string]string{"type": "act", "id": fmt.Sprint("a", i), "text": "I look around the tavern."})
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		await(engine.EventNarration, await(engine.EventAction, ""))
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/act")
}
