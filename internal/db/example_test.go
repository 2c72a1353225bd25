package db_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"tavern/adventures"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// The store's way in: open a database file, create a table, commit a step
// of it (here two chat lines), and read its events back, as a client
// catching up would.
func Example() {
	dir, err := os.MkdirTemp("", "tavern-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// Open migrates the file; Close waits for the queued commits.
	d, err := db.Open(ctx, filepath.Join(dir, "tavern.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	lib, err := adventures.Load()
	if err != nil {
		log.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 1)
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	table := engine.Table{ID: "t1", Name: "Greyhollow", Adventure: adventures.Default, Config: st.Config, Seats: 4, OwnerID: "p1", CreatedAt: at}
	if err := d.CreateTable(ctx, table, st, nil); err != nil {
		log.Fatal(err)
	}

	// A commit is one transaction: it lands whole or not at all.
	ann := engine.Player{ID: "p1", Name: "Ann"}
	var evs []engine.Event
	for i, text := range []string{"Anyone seen the miller?", "Try the mill."} {
		ev := engine.ChatEvent(ann, text)
		ev.Seq, ev.TS = int64(i+1), at.Add(time.Duration(i)*time.Second)
		evs = append(evs, ev)
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Events: evs}); err != nil {
		log.Fatal(err)
	}

	// Events after seq 0, at most 10: what a client that saw none needs.
	got, err := d.Events(ctx, "t1", 0, 10)
	if err != nil {
		log.Fatal(err)
	}
	for _, ev := range got {
		b, err := json.Marshal(ev)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(b))
	}
	// Output:
	// {"seq":1,"ts":"2026-11-02T09:30:00Z","kind":"chat","data":{"name":"Ann","player_id":"p1","text":"Anyone seen the miller?"}}
	// {"seq":2,"ts":"2026-11-02T09:30:01Z","kind":"chat","data":{"name":"Ann","player_id":"p1","text":"Try the mill."}}
}
