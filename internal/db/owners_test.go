package db

import (
	"bytes"
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The owner's side is written with a commit and read back as the hub
// loads a table: the private mark and npc_hp survive a reload, the invite
// hash rotates, bans come and go, and a player finds the tables they own
// or sit at.
func TestOwnerMarks(t *testing.T) {
	d := MustOpenDB(t)
	ctx := context.Background()
	st := newState(t, "")
	st.Config.NPCHP = engine.NPCHPWords
	tb := mustCreateTable(t, d, "t1", st)
	mustCreateTable(t, d, "t2", newState(t, ""))
	if got := mustLoad(t, d, "t1"); got.Table.Config.NPCHP != engine.NPCHPWords || got.State.Config.NPCHP != engine.NPCHPWords {
		t.Errorf("npc_hp after load: %+v", got.Table.Config)
	}
	if got := mustLoad(t, d, "t2"); got.Table.Config.NPCHP != "" || got.Table.Private {
		t.Errorf("a default table loads as %+v private=%v", got.Table.Config, got.Table.Private)
	}
	a, err := d.TableAccess(ctx, "t1")
	if err != nil || a.InviteHash != nil || len(a.Bans) != 0 {
		t.Fatalf("fresh access = %+v, %v", a, err)
	}
	_, err = d.TableAccess(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)

	name, yes := "Renamed", true
	h1 := sha256.Sum256([]byte("code-1"))
	c := store.Commit{TableID: "t1", Settings: &store.SettingsChange{Name: &name, Private: &yes, InviteHash: h1[:], Ban: "p_bad", BannedAt: time.Now()}}
	if err := d.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := mustLoad(t, d, "t1")
	if got.Table.Name != "Renamed" || !got.Table.Private {
		t.Errorf("after the commit: %+v", got.Table)
	}
	if a, _ := d.TableAccess(ctx, "t1"); !bytes.Equal(a.InviteHash, h1[:]) || len(a.Bans) != 1 || a.Bans[0] != "p_bad" {
		t.Errorf("access = %+v", a)
	}
	if id, err := d.TableByInvite(ctx, h1[:]); err != nil || id != "t1" {
		t.Errorf("by invite: %q %v", id, err)
	}
	h2 := sha256.Sum256([]byte("code-2"))
	if err := d.Commit(ctx, store.Commit{TableID: "t1", Settings: &store.SettingsChange{InviteHash: h2[:], Unban: "p_bad"}}); err != nil {
		t.Fatal(err)
	}
	_, err = d.TableByInvite(ctx, h1[:])
	wantCode(t, err, engine.ENOTFOUND)
	if a, _ := d.TableAccess(ctx, "t1"); len(a.Bans) != 0 {
		t.Errorf("ban not lifted: %+v", a)
	}
	wantCode(t, d.Commit(ctx, store.Commit{TableID: "nope", Settings: &store.SettingsChange{Private: &yes}}), engine.ENOTFOUND)

	// The owner's list: t1 and t2 are owned by tb.OwnerID.
	mine, err := d.PlayerTables(ctx, tb.OwnerID)
	if err != nil || len(mine) != 2 {
		t.Fatalf("owner's tables = %+v, %v", mine, err)
	}
	if other, _ := d.PlayerTables(ctx, "p_nobody"); len(other) != 0 {
		t.Errorf("a stranger's tables = %+v", other)
	}
}
