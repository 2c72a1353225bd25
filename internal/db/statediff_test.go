package db

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// mutate changes a few random things of st, as a turn does: a PC's HP or
// statuses, an NPC moved or removed, an item given or added, a quest, a
// relationship, the config, the game.
func mutate(r *rand.Rand, st *engine.State, step int) {
	pick := func(keys []string) string { slices.Sort(keys); return keys[r.IntN(len(keys))] }
	for range 1 + r.IntN(4) {
		switch r.IntN(9) {
		case 0:
			c := st.Party[r.IntN(len(st.Party))]
			c.HP = r.IntN(30)
			c.Statuses = append(c.Statuses, fmt.Sprint("s", step))
		case 1:
			if len(st.World.NPCs) > 1 {
				delete(st.World.NPCs, pick(mapsKeys(st.World.NPCs)))
			}
		case 2:
			n := st.World.NPCs[pick(mapsKeys(st.World.NPCs))]
			n.Location, n.HP = pick(mapsKeys(st.World.Locations)), r.IntN(20)
		case 3:
			id := fmt.Sprint("new-", step)
			st.World.Items[id] = &engine.Item{ID: id, Template: pick(mapsKeys(st.World.Templates)), Name: "Thing " + id,
				OwnerType: engine.OwnerCharacter, OwnerID: st.Party[0].ID, Buffs: []string{"b"}}
		case 4:
			it := st.World.Items[pick(mapsKeys(st.World.Items))]
			it.OwnerType, it.OwnerID = engine.OwnerCharacter, st.Party[r.IntN(len(st.Party))].ID
		case 5:
			q := st.World.Quests[pick(mapsKeys(st.World.Quests))]
			q.Status = engine.QuestActive
		case 6:
			st.World.Relationships[engine.RelKey(st.Party[0].ID, fmt.Sprint("npc", r.IntN(3)))] = r.IntN(200) - 100
			if r.IntN(2) == 0 && len(st.World.Relationships) > 1 {
				delete(st.World.Relationships, pick(mapsKeys(st.World.Relationships)))
			}
		case 7:
			st.Config.TurnTimeoutS = 30 + r.IntN(60)
		case 8:
			l := st.World.Locations[pick(mapsKeys(st.World.Locations))]
			l.Exits = append(l.Exits, engine.Exit{To: "road", Name: fmt.Sprint("path ", step)})
		}
	}
	st.Game.Turn++
	st.Party[0].XP++
}

func mapsKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCommitsThenReload commits a seeded sequence of turns, each changing
// a few rows of a clone of the state before (Commit's contract);
// commits that fail after writing the state rows, which must leave
// nothing written and not count as written; and reopens of the file.
// After every step a reload equals the state in memory.
func TestCommitsThenReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tavern.db")
	d := MustOpenDBAt(t, path)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	mustCreateTable(t, d, "t2", newState(t, "")) // rows of the same ids at another table
	r := rand.New(rand.NewPCG(7, 7))
	durable := st.Clone()
	for step := 1; step <= 60; step++ {
		st = st.Clone()
		mutate(r, st, step)
		c := store.Commit{TableID: "t1", State: st}
		switch {
		case step%10 == 5:
			// Fails after the state is written (the seat is taken): rolled
			// back, so the store must not count these rows as written.
			c.AddSeat = &engine.Seat{Seat: "9", PlayerID: "p1", CharacterID: "c1", JoinedAt: t0}
			if err := d.Commit(ctx, store.Commit{TableID: "t1", AddSeat: c.AddSeat}); err != nil && step == 5 {
				t.Fatal(err)
			}
			if err := d.Commit(ctx, c); engine.ErrorCode(err) != engine.ECONFLICT {
				t.Fatalf("step %d: err = %v, want ECONFLICT", step, err)
			}
			assertSameState(t, mustLoad(t, d, "t1").State, durable)
			continue
		case step%10 == 8:
			// Reopened, as after a restart or a crash: the new store
			// knows nothing of what was written, so it writes every row
			// of its first commit, then diffs again.
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			d = MustOpenDBAt(t, path)
		}
		if err := d.Commit(ctx, c); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		durable = st.Clone()
		assertSameState(t, mustLoad(t, d, "t1").State, st)
	}
	assertSameState(t, mustLoad(t, d, "t2").State, newState(t, ""))
}

// TestForget changes a row behind the store's back: a commit of an equal
// state skips the row (the store believes it holds the state) until the
// table is forgotten; then the commit rewrites it.
func TestForget(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.writer.conn.ExecContext(context.Background(), "UPDATE characters SET hp = 99 WHERE table_id = 't1' AND id = 'c1'"); err != nil {
		t.Fatal(err)
	}
	hp := func() int {
		return count(t, d.reader, "SELECT hp FROM characters WHERE table_id = 't1' AND id = 'c1'")
	}
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st.Clone()}); err != nil {
		t.Fatal(err)
	}
	if hp() != 99 {
		t.Fatalf("hp = %d: an unchanged row was rewritten (the diff is not in use)", hp())
	}
	d.Forget("t1")
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st}); err != nil {
		t.Fatal(err)
	}
	if want := st.Character("c1").HP; hp() != want {
		t.Errorf("hp after Forget and a commit = %d, want %d", hp(), want)
	}
}

// TestFirstCommitAfterCreateDiffs: CreateTable tells the writer what it
// wrote, so the table's first commit writes only the rows that changed
// (a row changed behind the store's back stays as it is), and a state the
// caller changes after CreateTable is not what the store believes it
// wrote.
func TestFirstCommitAfterCreateDiffs(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	if _, err := d.writer.conn.ExecContext(context.Background(), "UPDATE characters SET hp = 99 WHERE table_id = 't1' AND id = 'c1'"); err != nil {
		t.Fatal(err)
	}
	st.Character("c2").HP-- // changed by the caller after the create
	if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st}); err != nil {
		t.Fatal(err)
	}
	got := mustLoad(t, d, "t1").State
	if hp := got.Character("c1").HP; hp != 99 {
		t.Errorf("c1 hp = %d: the first commit rewrote an unchanged row", hp)
	}
	if hp, want := got.Character("c2").HP, st.Character("c2").HP; hp != want {
		t.Errorf("c2 hp = %d, want %d: the change after the create was not written", hp, want)
	}
}

// TestStateHandedOver follows Commit's contract on states: each commit's
// state is a changed clone of the last, which the store keeps rather than
// copies and never changes; the same state handed again, changed in place,
// is written whole.
func TestStateHandedOver(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := fightingState(t)
	mustCreateTable(t, d, "t1", st)
	commit := func(st *engine.State) {
		t.Helper()
		before := st.Clone()
		if err := d.Commit(ctx, store.Commit{TableID: "t1", State: st}); err != nil {
			t.Fatal(err)
		}
		assertSameState(t, st, before) // the store does not change it
		assertSameState(t, mustLoad(t, d, "t1").State, st)
	}
	commit(st)
	next := st.Clone()
	next.Party[1].HP = 1
	next.World.NPCs["snikket"].Statuses = nil
	commit(next)
	next.Party[2].Gold = 77 // against the contract, but handed again: written whole
	next.World.Items["lantern-1"].Buffs = nil
	commit(next)
}
