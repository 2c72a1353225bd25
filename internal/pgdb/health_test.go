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

// TestHealerClears: a store marked unavailable whose commits were all
// answered (StopRetries) is cleared by its own probe once the database
// takes writes again, and Close stops the prober.
func TestHealerClears(t *testing.T) {
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
	d.StopRetries()
	paused := true
	err = d.Commit(ctx, store.Commit{TableID: "t1", Paused: &paused})
	if !errors.Is(err, store.ErrUnavailable) || engine.ErrorCode(err) != engine.EUNAVAILABLE {
		t.Fatalf("commit to a read-only database: %v", err)
	}
	if d.Unavailable() == nil {
		t.Fatal("available after a refused write")
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
