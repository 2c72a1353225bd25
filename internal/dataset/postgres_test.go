package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/dataset"
	"tavern/internal/engine"
	"tavern/internal/pgdb"
	"tavern/internal/pgtest"
	"tavern/internal/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgSecrets are what mustOpenPostgres stores where no query may read it.
var pgSecrets = []string{"tok-hash-alice-7f3a", "the-miller-poisoned-the-well"}

// mustOpenPostgres stores a player, a table with a secret-keeping NPC and
// a turn on a new PostgreSQL database, sets up the data role and opens
// the data agent's view of it. It returns the store too.
func mustOpenPostgres(t *testing.T) (*dataset.Dataset, *pgdb.DB) {
	t.Helper()
	ctx := context.Background()
	url := pgtest.URL(t)
	st, err := pgdb.Open(ctx, url, pgdb.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	if err := st.CreatePlayer(ctx, engine.Player{ID: "p1", Name: "Alice", CreatedAt: at}, []byte(pgSecrets[0])); err != nil {
		t.Fatal(err)
	}
	lib, _ := adventures.Load()
	adv, _ := lib.Get(adventures.Default)
	state := engine.NewState(engine.Config{}, adv, lib.Catalogue, 1)
	for _, n := range state.World.NPCs {
		n.Secret = pgSecrets[1]
	}
	tb := engine.Table{ID: "t1", Name: "Greyhollow", Adventure: adventures.Default, Config: state.Config, Seats: 4, CreatedAt: at}
	if err := st.CreateTable(ctx, tb, state, nil); err != nil {
		t.Fatal(err)
	}
	narr := engine.NarrationEvent(engine.AgentNarrative, "The mill creaks.", nil, "")
	narr.Seq, narr.TS, narr.Turn = 1, at.Add(time.Minute), "t1"
	if err := st.Commit(ctx, store.Commit{TableID: "t1", Events: []engine.Event{narr}}); err != nil {
		t.Fatal(err)
	}
	var views []string
	for _, v := range dataset.Views() {
		views = append(views, v.Name)
	}
	roleURL, err := st.DataRole(ctx, url, "s3cret-pass", views)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.OpenPostgres(ctx, roleURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, st
}

// pgHostile adds to hostile what is particular to PostgreSQL.
var pgHostile = []struct{ name, sql string }{
	{"read a file", "SELECT pg_read_file('/etc/passwd')"},
	{"become another role", "SELECT set_config('role', 'postgres', false)"},
	{"read a setting", "SELECT current_setting('data_directory')"},
	{"catalog", "SELECT * FROM pg_catalog.pg_authid"},
	{"catalog bare", "SELECT rolpassword FROM pg_authid"},
	{"information schema", "SELECT * FROM information_schema.tables"},
	{"copy", "COPY players TO STDOUT"},
	{"dollar quotes", "SELECT $$x$$"},
	{"large object", "SELECT lo_import('/etc/passwd')"},
	{"owners", "SELECT * FROM table_owners"},
	{"nodes", "SELECT * FROM nodes"},
	{"set role", "SET ROLE postgres"},
	{"reset", "RESET ALL"},
	{"lock", "LOCK TABLE players"},
}

// TestPostgresRefusesHostileSQL: every hostile query of the SQLite tests,
// and PostgreSQL's own, is refused before it runs.
func TestPostgresRefusesHostileSQL(t *testing.T) {
	d, st := mustOpenPostgres(t)
	for _, tc := range append(hostile, pgHostile...) {
		t.Run(tc.name, func(t *testing.T) {
			r, err := d.Query(context.Background(), tc.sql)
			if !errors.Is(err, dataset.ErrRefused) {
				t.Fatalf("Query(%q) = %v, %v; want a refusal", tc.sql, r, err)
			}
			if engine.ErrorCode(err) != engine.EINVALID || !strings.HasPrefix(engine.ErrorMessage(err), "Refused: ") {
				t.Errorf("refusal %v: code %s, message %q", err, engine.ErrorCode(err), engine.ErrorMessage(err))
			}
		})
	}
	var players int
	if err := st.Pool().QueryRow(context.Background(), "SELECT count(*) FROM players").Scan(&players); err != nil || players != 1 {
		t.Errorf("players after the hostile queries: %d %v", players, err)
	}
}

// TestPostgresNeverReturnsSecrets reads every view in full.
func TestPostgresNeverReturnsSecrets(t *testing.T) {
	d, _ := mustOpenPostgres(t)
	for _, v := range dataset.Views() {
		r, err := d.Query(context.Background(), "SELECT * FROM "+v.Name)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		text := fmt.Sprint(r.Rows)
		for _, s := range pgSecrets {
			if strings.Contains(text, s) {
				t.Errorf("%s returns the secret %q", v.Name, s)
			}
		}
	}
}

// TestPostgresReads: the views answer, with SQLite's value types; a
// query past the deadline is stopped; an invalid one is explained.
func TestPostgresReads(t *testing.T) {
	d, _ := mustOpenPostgres(t)
	ctx := context.Background()
	r, err := d.Query(ctx, "SELECT name, seat_count, turns_played FROM v_tables")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 1 || r.Rows[0][0] != "Greyhollow" || r.Rows[0][1] != int64(4) || r.Rows[0][2] != int64(1) {
		t.Fatalf("v_tables: %v", r.Rows)
	}
	desc, err := d.Describe(ctx)
	if err != nil || len(desc) != len(dataset.Views()) {
		t.Fatalf("describe: %v %v", desc, err)
	}
	d.Timeout = 100 * time.Millisecond
	_, err = d.Query(ctx, "SELECT count(*) FROM v_events a, v_events b, v_events c, generate_series(1, 100000000)")
	if !errors.Is(err, dataset.ErrTimeout) {
		t.Errorf("a long query: %v, want ErrTimeout", err)
	}
	_, err = d.Query(ctx, "SELECT nope FROM v_tables")
	if !errors.Is(err, dataset.ErrInvalid) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an invalid query: %v, want ErrInvalid naming the column", err)
	}
}

// TestPostgresAnalyst: the offline analyst's queries run on PostgreSQL's
// views too.
func TestPostgresAnalyst(t *testing.T) {
	d, _ := mustOpenPostgres(t)
	a := &dataset.Analyst{Data: d, Now: func() time.Time { return time.Date(2026, 11, 8, 12, 0, 0, 0, time.UTC) }}
	for _, q := range []string{"How many tables are there?", "Which tools fail most?", "How often do parties die?", "How many turns were played this week?", "What did the models cost?"} {
		ans, err := a.Ask(context.Background(), q)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		t.Logf("%q: %+v", q, ans)
	}
}
