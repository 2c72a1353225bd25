package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/coder/websocket"

	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/tavern"
)

// Example plays one action at a table with the offline narrator: a hub on
// a new SQLite file (built by internal/tavern, as the server builds it), a
// table, a seat, and an act sent over the table's websocket as
// PROTOCOL.md describes, answered by an ack and then narrated.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hub-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := tavern.DefaultConfig()
	cfg.DB = filepath.Join(dir, "tavern.db")
	cfg.Hub = func(c *hub.Config) { c.Seed = func() uint64 { return 7 } } // reproducible dice
	tv, err := tavern.New(ctx, cfg)
	if err != nil {
		panic(err)
	}
	defer tv.Close()
	h := tv.Hub

	ann := engine.Player{ID: "p-ann", Name: "Ann"}
	table, err := h.CreateTable(ctx, ann, hub.TableSpec{Name: "Greyhollow"})
	if err != nil {
		panic(err)
	}
	aldric, err := h.Sit(ctx, table.ID, ann, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s sits at seat %s\n", aldric.Name, aldric.Seat)

	// The web package authenticates the player; here Ann is given.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeWS(w, r, table.ID, &ann)
	}))
	defer srv.Close()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"?role=player",
		&websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err != nil {
		panic(err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"act","id":"a1","text":"I look around the square"}`)); err != nil {
		panic(err)
	}

	// The ack says the action is stored; the action event names it; its
	// narration answers it.
	var action string
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			panic(err)
		}
		var f struct {
			Type, ID, Kind string
			Data           struct {
				ActionID string `json:"action_id"`
				Text     string
			}
		}
		if err := json.Unmarshal(msg, &f); err != nil {
			panic(err)
		}
		switch {
		case f.Type == "ack" && f.ID == "a1":
			fmt.Println("ack")
		case f.Kind == "action" && f.Data.Text == "I look around the square":
			action = f.Data.ActionID
		case f.Kind == "narration" && action != "" && f.Data.ActionID == action:
			fmt.Println(strings.SplitAfter(f.Data.Text, ".")[0])
			return
		}
	}
	// Output:
	// Aldric sits at seat 1
	// ack
	// Greyhollow Square.
}
