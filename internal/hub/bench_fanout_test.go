package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// BenchmarkFanout measures one `say` delivered to N spectators of a table:
// one iteration is the say, its ack, and the chat event read by every
// spectator (real websocket clients over loopback, so the clients' reads
// are counted too; cmd/fanout measures the server alone).
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{16, 256} {
		b.Run(fmt.Sprintf("sockets=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, n int) {
	ctx := context.Background()
	tv := openTavern(b, filepath.Join(b.TempDir(), "tavern.db"), &agent.Runner{Narrative: offline.Narrator{}, Combat: offline.Narrator{}},
		func(c *hub.Config) { c.Seed, c.ShutdownGrace = func() uint64 { return 1 }, time.Second })
	defer tv.Close()
	st, h := tv.Store, tv.Hub
	tableID, p := seatAldric(b, tv)
	mux := http.NewServeMux()
	var current atomic.Pointer[engine.Player] // the seated player (token "tok")
	current.Store(&p)
	mux.HandleFunc("/ws/tables/{id}", func(w http.ResponseWriter, r *http.Request) {
		var pl *engine.Player
		if r.URL.Query().Get("token") == "tok" {
			pl = current.Load()
		}
		h.ServeWS(w, r, r.PathValue("id"), pl)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer srv.CloseClientConnections()
	base := strings.Replace(srv.URL, "http", "ws", 1) + "/ws/tables/" + tableID + "?role="
	dial := func(q string) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, base+q, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
		if err != nil {
			b.Fatal(err)
		}
		c.SetReadLimit(1 << 20)
		return c
	}

	// Every spectator signals got once per chat event it reads, and ready
	// at its snapshot (queued with its registration: a dial returns
	// before the table lists the socket, and a say published before that
	// would reach it only inside the snapshot).
	got := make(chan struct{}, n)
	ready := make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		c := dial("spectator")
		defer c.CloseNow()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				var f struct{ Type, Kind string }
				if json.Unmarshal(data, &f) == nil && f.Type == "event" && f.Kind == string(engine.EventChat) {
					got <- struct{}{}
				}
				if f.Type == "snapshot" {
					ready <- struct{}{}
				}
			}
		}()
	}
	// A player may send 30 frames at once (the rate limit's burst, across
	// its connections), so every 25 says the seat passes to a new player,
	// off the clock.
	var player *websocket.Conn
	var refused, acked atomic.Value // the last error and ack frames the player got
	seated := 0
	redial := func() {
		if player != nil {
			player.Close(websocket.StatusNormalClosure, "")
			old := current.Load()
			if err := h.Leave(ctx, tableID, *old); err != nil {
				b.Fatal(err)
			}
			seated++
			np := engine.Player{ID: fmt.Sprint("p", seated+1), Name: "Ann"}
			if err := st.CreatePlayer(ctx, np, []byte(fmt.Sprint("tok", seated))); err != nil {
				b.Fatal(err)
			}
			if _, err := h.Sit(ctx, tableID, np, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
				b.Fatal(err)
			}
			current.Store(&np)
		}
		player = dial("player&token=tok")
		go func(c *websocket.Conn) { // the player's own frames are not counted
			for {
				_, data, err := c.Read(ctx)
				if err != nil {
					return
				}
				switch {
				case strings.Contains(string(data), `"type":"error"`):
					refused.Store(string(data))
				case strings.Contains(string(data), `"type":"ack"`):
					acked.Store(string(data))
				}
			}
		}(player)
	}
	for range n {
		<-ready
	}
	redial()
	defer func() { player.CloseNow() }()
	cpu0 := processCPU(b)
	for i := 0; b.Loop(); i++ {
		if i > 0 && i%25 == 0 {
			b.StopTimer()
			redial()
			b.StartTimer()
		}
		msg, _ := json.Marshal(map[string]string{"type": "say", "id": fmt.Sprint("s", i), "text": "hello"})
		if err := player.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		for k := range n {
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				b.Fatalf("say %d delivered to %d of %d spectators in 10 s; the player's last ack: %v, last error: %v",
					i, k, n, acked.Load(), refused.Load())
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/frame")
	// The process's CPU (server and clients) is steadier than the elapsed
	// time on a shared machine, and counts work done in parallel.
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N*n), "cpu-ns/frame")
	srv.CloseClientConnections()
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
