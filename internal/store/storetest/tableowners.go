package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"testing"
	"time"

	"tavern/adventures"
	"tavern/internal/engine"
	"tavern/internal/store"
)

// TableOwnersStore is a Store with the table owner's side: private
// tables, NPC health in words, invites and bans (store.SettingsChange).
type TableOwnersStore interface {
	Store
	TableAccess(ctx context.Context, tableID string) (store.Access, error)
	PlayerTables(ctx context.Context, playerID string) ([]store.PlayerTable, error)
	PrivateTableIDs(ctx context.Context, playerID string) ([]string, error)
	TableByInvite(ctx context.Context, hash []byte) (string, error)
}

// RunTableOwners runs the contract of the table owner's side; open
// returns a new, empty store for one test.
func RunTableOwners(t *testing.T, open func(t *testing.T) TableOwnersStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s TableOwnersStore)
	}{
		{"OwnerMarks", testOwnerMarks},
		{"PlayerTables", testPlayerTables},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

// The owner's side is written with a commit and read back as a table
// loads: the private mark and npc_hp survive a reload, the invite hash
// rotates, bans come and go; a commit to a missing table is ENOTFOUND and
// one that fails writes none of its owner change.
func testOwnerMarks(t *testing.T, s TableOwnersStore) {
	st := fightingState(t)
	st.Config.NPCHP = engine.NPCHPWords
	createTable(t, s, "t1", st)
	createTable(t, s, "t2", fightingState(t))
	if got := load(t, s, "t1"); got.Table.Config.NPCHP != engine.NPCHPWords || got.State.Config.NPCHP != engine.NPCHPWords {
		t.Errorf("npc_hp after load: table %+v, state %+v", got.Table.Config, got.State.Config)
	}
	if got := load(t, s, "t2"); got.Table.Config.NPCHP != "" || got.Table.Private {
		t.Errorf("a default table loads as %+v private=%v", got.Table.Config, got.Table.Private)
	}
	a, err := s.TableAccess(ctx, "t1")
	if err != nil || a.InviteHash != nil || len(a.Bans) != 0 {
		t.Fatalf("fresh access = %+v, %v", a, err)
	}
	_, err = s.TableAccess(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)

	name, yes := "Renamed", true
	h1 := sha256.Sum256([]byte("code-1"))
	c := store.Commit{TableID: "t1", Settings: &store.SettingsChange{Name: &name, Private: &yes, InviteHash: h1[:], Ban: "p_bad", BannedAt: at}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := load(t, s, "t1")
	if got.Table.Name != "Renamed" || !got.Table.Private {
		t.Errorf("after the commit: %+v", got.Table)
	}
	if a, _ := s.TableAccess(ctx, "t1"); !bytes.Equal(a.InviteHash, h1[:]) || len(a.Bans) != 1 || a.Bans[0] != "p_bad" {
		t.Errorf("access = %+v", a)
	}
	if id, err := s.TableByInvite(ctx, h1[:]); err != nil || id != "t1" {
		t.Errorf("by invite: %q %v", id, err)
	}
	// Banning again is no error; a second ban adds to the list, in order.
	c = store.Commit{TableID: "t1", Settings: &store.SettingsChange{Ban: "p_bad", BannedAt: at}}
	if err := s.Commit(ctx, c); err != nil {
		t.Fatalf("banning a banned player again: %v", err)
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Settings: &store.SettingsChange{Ban: "p_a", BannedAt: at}}); err != nil {
		t.Fatal(err)
	}
	if a, _ := s.TableAccess(ctx, "t1"); len(a.Bans) != 2 || a.Bans[0] != "p_a" || a.Bans[1] != "p_bad" {
		t.Errorf("bans = %v", a.Bans)
	}

	// A new code replaces the old one, which stops working.
	h2 := sha256.Sum256([]byte("code-2"))
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Settings: &store.SettingsChange{InviteHash: h2[:], Unban: "p_bad"}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.TableByInvite(ctx, h1[:])
	wantCode(t, err, engine.ENOTFOUND)
	if a, _ := s.TableAccess(ctx, "t1"); len(a.Bans) != 1 || a.Bans[0] != "p_a" {
		t.Errorf("ban not lifted: %+v", a)
	}
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Settings: &store.SettingsChange{Private: &yes}}), engine.ENOTFOUND)
	wantCode(t, s.Commit(ctx, store.Commit{TableID: "nope", Settings: &store.SettingsChange{Ban: "p_b", BannedAt: at}}), engine.ENOTFOUND)

	// A commit that fails (a seq reused) writes none of its owner change.
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: chat(1, 1)}); err != nil {
		t.Fatal(err)
	}
	no := false
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: chat(1, 1), Settings: &store.SettingsChange{Private: &no, Ban: "p_c", BannedAt: at}}); err == nil {
		t.Fatal("a commit reusing seq 1 succeeded")
	}
	if got := load(t, s, "t1"); !got.Table.Private {
		t.Error("a failed commit cleared the private mark")
	}
	if a, _ := s.TableAccess(ctx, "t1"); len(a.Bans) != 1 {
		t.Errorf("a failed commit banned: %v", a.Bans)
	}

	// A closed table's invite finds nothing; the change of NPC health
	// rides on the state's config.
	next := load(t, s, "t1").State
	next.Config.NPCHP = ""
	closed := at.Add(time.Hour)
	if err := s.Commit(ctx, store.Commit{TableID: "t1", State: next, ClosedAt: &closed}); err != nil {
		t.Fatal(err)
	}
	_, err = s.TableByInvite(ctx, h2[:])
	wantCode(t, err, engine.ENOTFOUND)
	if got := load(t, s, "t1"); got.Table.Config.NPCHP != "" || got.State.Config.NPCHP != "" {
		t.Errorf("npc_hp after going back to exact: %q", got.Table.Config.NPCHP)
	}
}

// A player's tables: those they own and those they sit at, closed ones
// too, newest activity first, with their seat and character.
func testPlayerTables(t *testing.T, s TableOwnersStore) {
	st := fightingState(t)
	for i, id := range []string{"own-old", "seated", "own-new", "other"} {
		owner := "p1"
		if id == "seated" || id == "other" {
			owner = "p9"
		}
		tb := engine.Table{ID: id, Name: "Table " + id, Adventure: adventures.Default, Config: st.Config, Seats: 4, OwnerID: owner,
			CreatedAt: at.Add(time.Duration(i) * time.Minute), Private: id != "own-old"}
		if err := s.CreateTable(ctx, tb, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	seat := engine.Seat{Seat: "2", PlayerID: "p1", CharacterID: st.Party[0].ID, JoinedAt: at}
	ev := chat(1, 1)
	ev[0].TS = at.Add(time.Hour)
	if err := s.Commit(ctx, store.Commit{TableID: "seated", AddSeat: &seat, Events: ev}); err != nil {
		t.Fatal(err)
	}
	closed := at.Add(2 * time.Hour)
	if err := s.Commit(ctx, store.Commit{TableID: "own-old", ClosedAt: &closed}); err != nil {
		t.Fatal(err)
	}
	ts, err := s.PlayerTables(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range ts {
		ids = append(ids, p.Table.ID)
	}
	if len(ts) != 3 || ids[0] != "seated" || ids[1] != "own-new" || ids[2] != "own-old" {
		t.Fatalf("p1's tables %v, want seated, own-new, own-old", ids)
	}
	p := ts[0]
	if p.Seat != "2" || p.Seated != 1 || p.Character.ID != st.Party[0].ID || p.Character.Name != st.Party[0].Name || p.Mode != st.Game.Mode ||
		!p.LastEventAt.Equal(at.Add(time.Hour)) || p.Table.OwnerID != "p9" {
		t.Errorf("the seated table: %+v", p)
	}
	if !ts[1].Table.Private || ts[1].Seat != "" || !ts[1].LastEventAt.Equal(ts[1].Table.CreatedAt) {
		t.Errorf("the private owned table: %+v", ts[1])
	}
	if !ts[2].Flags.Closed || !ts[2].Flags.ClosedAt.Equal(closed) {
		t.Errorf("the closed owned table: %+v", ts[2].Flags)
	}
	if other, _ := s.PlayerTables(ctx, "p_nobody"); len(other) != 0 {
		t.Errorf("a stranger's tables = %+v", other)
	}
	// The lobby's question: which private tables may they see?
	private, err := s.PrivateTableIDs(ctx, "p1")
	slices.Sort(private)
	if err != nil || !slices.Equal(private, []string{"own-new", "seated"}) {
		t.Errorf("p1's private tables %v (%v), want own-new and seated", private, err)
	}
	if other, err := s.PrivateTableIDs(ctx, "p_nobody"); err != nil || len(other) != 0 {
		t.Errorf("a stranger's private tables = %v (%v)", other, err)
	}
}
