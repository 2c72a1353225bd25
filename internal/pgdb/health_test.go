package pgdb_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store"
)

// TestUnavailable: a database that refuses writes (read-only here) fails
// the commit with store.ErrUnavailable (EUNAVAILABLE), marks the store
// unavailable, and refuses new commits at once; once it takes writes
// again, the probe clears the mark and commits land.
func TestUnavailable(t *testing.T) {
	url := pgtest.URL(t)
	admin, err := pgx.Connect(ctx, url) // a session made before the database turns read-only
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	d, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	lib, err := adventures.Load()
	if err != nil {
		t.Fatal(err)
	}
	adv, _ := lib.Get(adventures.Default)
	st := engine.NewState(engine.Config{}, adv, lib.Catalogue, 1)
	if err := d.CreateTable(ctx, engine.Table{ID: "t1", Name: "T", Adventure: adventures.Default, Seats: 4, CreatedAt: at}, st, nil); err != nil {
		t.Fatal(err)
	}
	if d.Unavailable() != nil {
		t.Fatal("unavailable from the start")
	}

	readOnly := func(on bool) {
		t.Helper()
		q := "ALTER DATABASE " + pgx.Identifier{admin.Config().Database}.Sanitize() + " SET default_transaction_read_only = "
		if on {
			q += "on"
		} else {
			q += "off"
		}
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
		d.Pool().Reset() // new sessions take the setting
	}
	readOnly(true)
	paused := true
	err = d.Commit(ctx, store.Commit{TableID: "t1", Paused: &paused})
	if !errors.Is(err, store.ErrUnavailable) || engine.ErrorCode(err) != engine.EUNAVAILABLE {
		t.Fatalf("commit to a read-only database: %v", err)
	}
	if d.Unavailable() == nil {
		t.Fatal("available after a refused write")
	}
	if err := d.Enqueue(ctx, store.Commit{TableID: "t1", Paused: &paused}, func(error) { t.Error("done called") }); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("enqueue while unavailable: %v", err)
	}

	readOnly(false)
	deadline := time.Now().Add(30 * time.Second)
	for d.Unavailable() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("still unavailable: %v", d.Unavailable())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Paused: &paused}); err != nil {
		t.Fatalf("commit once writable: %v", err)
	}
}
