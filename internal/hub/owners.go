package hub

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// The table's owner (PROTOCOL.md "Table owners"): who may see a private
// table, its invite code, its settings, and the owner's kick, ban and
// pause. The owner is the player who created the table (meta.OwnerID,
// never changed). Every check of who may see a table is sees, on the
// access a table publishes.

// OwnerStore is the part of the store behind the owner's side.
// internal/db satisfies it. Implementations must be safe for concurrent
// use.
type OwnerStore interface {
	// TableAccess returns a table's invite code hash and bans; ENOTFOUND
	// if there is no such table.
	TableAccess(ctx context.Context, tableID string) (store.Access, error)
	// PlayerTables returns every table a player owns or sits at, closed
	// ones included, newest activity first.
	PlayerTables(ctx context.Context, playerID string) ([]store.PlayerTable, error)
	// PrivateTableIDs returns the ids of the private tables a player owns
	// or sits at.
	PrivateTableIDs(ctx context.Context, playerID string) ([]string, error)
	// TableByInvite returns the id of the open table whose invite code
	// hashes to hash; ENOTFOUND if none.
	TableByInvite(ctx context.Context, hash []byte) (string, error)
}

func (d deadlined) TableByInvite(ctx context.Context, hash []byte) (string, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TableByInvite(ctx, hash)
}

func (d deadlined) TableAccess(ctx context.Context, tableID string) (store.Access, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.TableAccess(ctx, tableID)
}

func (d deadlined) PrivateTableIDs(ctx context.Context, playerID string) ([]string, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.PrivateTableIDs(ctx, playerID)
}

func (d deadlined) PlayerTables(ctx context.Context, playerID string) ([]store.PlayerTable, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	return d.s.PlayerTables(ctx, playerID)
}

// Close reasons of 4003 (PROTOCOL.md "Table owners"): a page shows them.
const (
	ReasonOwner    = "removed by the table's owner"
	ReasonOperator = "removed by the operator"
	ReasonBanned   = "banned from this table"
	// ReasonServerBan closes the sockets of a player the operator banned
	// from the whole server (PROTOCOL.md "Operator, continued").
	ReasonServerBan = "banned by the operator"
	// ReasonNotOpen closes the sockets of a viewer the table is no longer
	// open to: it went private, or the invite code they came with was
	// replaced.
	ReasonNotOpen = "this table is no longer open to you"
)

// Who freed a seat, in player_left's "by" and the audit's.
const (
	ByOwner    = "owner"
	ByOperator = "operator"
)

// maxInviteLen bounds an invite code read from a request: ours are 22
// characters.
const maxInviteLen = 64

// Viewer is who asks to see a table: a player (PlayerID, "" for an
// anonymous request) and the invite code the request carries, if any.
type Viewer struct {
	PlayerID string
	Invite   string
}

// ownerState is the owner's side of a table that the store keeps apart
// from the state: the invite code's hash and the bans, the notes, the
// whispers waiting for the DM and the save points a retcon goes back to
// (notes.go). Owned by the table goroutine.
type ownerState struct {
	invite   []byte
	bans     map[string]bool
	notes    []store.Note
	whispers []store.Whisper
	points   []store.SavePoint
	// read are the whispers read by turns a retcon can still undo, with
	// the turn that read each (store.OwnerData.Read).
	read []store.Whisper
	// retcons are the retcons made since the table loaded (retracted);
	// the store knows the older ones.
	retcons []engine.RetconData
}

// access is what decides who may see a table, published by the table
// goroutine (publishAccess) for readers off it. Never changed once
// published.
type access struct {
	owner                   string
	private, closed, words  bool
	invite                  []byte
	bans, seated, npcByName map[string]bool
	// npcs is how many NPCs the state had when npcByName was made.
	npcs int
}

// publishAccess publishes who may see the table now. Runs on the table
// goroutine, with every summary update (seats, marks, settings), and when
// a words table's NPCs change (publish).
func (t *table) publishAccess() { t.access.Store(t.newAccess()) }

// newAccess is the access of the table now.
func (t *table) newAccess() *access {
	a := &access{owner: t.meta.OwnerID, private: t.meta.Private, closed: t.closed, words: t.st.Config.Words(),
		invite: t.own.invite, bans: t.own.bans, seated: make(map[string]bool, len(t.seats))}
	for _, s := range t.seats {
		a.seated[s.PlayerID] = true
	}
	if a.words {
		a.npcByName, a.npcs = npcNames(t.st), len(t.st.World.NPCs)
	}
	return a
}

// npcsStale reports whether a, the published access, misses NPCs the
// state has now. NPCs are only ever added to a state (a retcon's state,
// which has fewer, is published by updateSummary), so a count tells; it
// costs no allocation, where remaking the access on every batch did.
func (t *table) npcsStale(a *access) bool {
	return t.st.Config.Words() && (!a.words || a.npcs != len(t.st.World.NPCs))
}

// loadOwner reads the owner's side of the table from the store: its
// invite hash and bans, its notes, waiting whispers and save points. get
// calls it once, as the table loads; a failure fails the load, as for the
// rest of the table's data (a table without its bans would let a banned
// player in; without its notes the DM would forget them).
func (t *table) loadOwner(ctx context.Context) error {
	a, err := t.h.cfg.Store.TableAccess(ctx, t.id)
	if err != nil {
		return fmt.Errorf("load access of %s: %w", t.id, err)
	}
	d, err := t.h.cfg.Store.OwnerData(ctx, t.id)
	if err != nil {
		return fmt.Errorf("load notes and save points of %s: %w", t.id, err)
	}
	t.own.invite, t.own.bans = a.InviteHash, map[string]bool{}
	for _, p := range a.Bans {
		t.own.bans[p] = true
	}
	t.own.notes, t.own.whispers, t.own.points, t.own.read = d.Notes, d.Whispers, d.Points, d.Read
	t.publishAccess()
	return nil
}

// errNoTable is what a stranger learns of a table it may not see: the
// same answer as for one that does not exist.
func errNoTable(id string) error { return engine.Errorf(engine.ENOTFOUND, "Table %q not found.", id) }

var errBanned = engine.Errorf(engine.EFORBIDDEN, "You are banned from this table.")

// closedOut refuses a join of a player the operator shut out of the whole
// server (Hub.ClosePlayer), with the reason their other sockets got.
type closedOut struct{ reason string }

func (e *closedOut) Error() string { return "refused: " + e.reason }

// member reports whether playerID owns the table or sits at it.
func (a *access) member(playerID string) bool {
	return a.owns(playerID) || playerID != "" && a.seated[playerID]
}

// sees returns nil if v may see table id: a public table, or a private
// one to its owner, its seated players and the holder of its current
// invite code; never a banned player (ENOTFOUND on a private table,
// EFORBIDDEN on a public one). A closed table stays readable to its
// owner and the players still seated at it, to no one else.
func (a *access) sees(id string, v Viewer) error {
	banned := v.PlayerID != "" && a.bans[v.PlayerID]
	switch {
	case a.closed:
		if a.member(v.PlayerID) && !banned {
			return nil
		}
		return errNoTable(id)
	case banned && a.private:
		return errNoTable(id)
	case banned:
		return errBanned
	case !a.private || a.member(v.PlayerID) || a.invited(v.Invite):
		return nil
	}
	return errNoTable(id)
}

// invited reports whether code is the table's current invite code.
func (a *access) invited(code string) bool {
	if code == "" || len(code) > maxInviteLen || a.invite == nil {
		return false
	}
	h := sha256.Sum256([]byte(code))
	return subtle.ConstantTimeCompare(h[:], a.invite) == 1
}

// Visible returns nil if v may see table id (access.sees), closed tables
// included for those who played them; otherwise the error to answer,
// ENOTFOUND for a stranger at a private table.
func (h *Hub) Visible(ctx context.Context, id string, v Viewer) error {
	t, err := h.anyTable(id)
	if err != nil {
		return err
	}
	return t.access.Load().sees(id, v)
}

// errSeatGone refuses a player's socket whose seat was freed while it
// joined.
var errSeatGone = protoErr(CodeNotSeated, "Your seat was freed; join as a spectator or take a seat.")

// admit checks, on the table goroutine, that client c (viewer v) may join:
// the table is visible to v, and a player still has a seat.
func (t *table) admit(c *client, v Viewer) error {
	if reason := t.h.closedReason(v.PlayerID); v.PlayerID != "" && reason != "" {
		return &closedOut{reason: reason}
	}
	a := t.access.Load()
	if v.PlayerID != "" && a.bans[v.PlayerID] {
		return errBanned
	}
	if err := a.sees(t.id, v); err != nil {
		return err
	}
	if c.role == rolePlayer {
		if _, ok := t.seatOf(c.player.ID); !ok {
			return errSeatGone
		}
	}
	return nil
}

// refusedReason is the 4003 reason of a join refused by admit, or "" for
// another failure.
func refusedReason(err error) string {
	var out *closedOut
	switch {
	case errors.As(err, &out):
		return out.reason
	case errors.Is(err, errBanned):
		return ReasonBanned
	case errors.Is(err, errSeatGone):
		return "your seat was freed"
	case engine.ErrorCode(err) == engine.ENOTFOUND:
		return ReasonNotOpen
	}
	return ""
}

// byOwner runs f on the table goroutine for its owner p and logs it.
func (h *Hub) byOwner(ctx context.Context, id string, p engine.Player, action string, f func(t *table) error) error {
	t, err := h.ownerOf(id, p.ID, "do this")
	if err != nil {
		return err
	}
	err = t.callOpen(ctx, func() error { return f(t) })
	if err == nil {
		h.log.Info("owner action", "table", id, "action", action, "owner", p.ID)
	}
	return err
}

// Invite makes table id a new invite code, for its owner p; the code it
// replaces stops working at once. The store keeps only its hash.
func (h *Hub) Invite(ctx context.Context, id string, p engine.Player) (string, error) {
	code := newInviteCode()
	sum := sha256.Sum256([]byte(code))
	err := h.byOwner(ctx, id, p, "invite", func(t *table) error {
		if err := t.commit(ctx, store.Commit{Settings: &store.SettingsChange{InviteHash: sum[:]}}, t.turnLabel()); err != nil {
			return fmt.Errorf("invite %s: %w", t.id, err)
		}
		t.own.invite = sum[:]
		t.publishAccess()
		t.closeUnseen()
		return nil
	})
	return code, err
}

// closeUnseen closes, with 4003, every socket whose viewer may no longer
// see the table (PROTOCOL.md "Table owners": a private table is open only
// to its owner, its seated players and the holders of its current invite
// code; a replaced code stops working at once). Runs on the table
// goroutine, after publishAccess.
func (t *table) closeUnseen() {
	a := t.access.Load()
	for c := range t.clients {
		if a.sees(t.id, c.viewer) != nil {
			c.close(CloseFreed, ReasonNotOpen)
		}
	}
}

// newInviteCode is 128 random bits, URL-safe.
func newInviteCode() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// InviteID returns the id of the table whose invite code is code, as the
// store has it (ENOTFOUND if none), without loading the table: a node
// routes a /join/ request by it to the node that runs the table. Safe for
// concurrent use.
func (h *Hub) InviteID(ctx context.Context, code string) (string, error) {
	if code == "" || len(code) > maxInviteLen {
		return "", engine.Errorf(engine.ENOTFOUND, "no such invite")
	}
	sum := sha256.Sum256([]byte(code))
	return h.cfg.Store.TableByInvite(ctx, sum[:])
}

// InviteTable returns the summary of the table whose current invite code
// is code, for the join page: ENOTFOUND if no open table has it (an old
// code, a closed table) or if player playerID is banned there.
func (h *Hub) InviteTable(ctx context.Context, code, playerID string) (TableSummary, error) {
	invalid := engine.Errorf(engine.ENOTFOUND, "This invite link is not valid (any more).")
	if code == "" || len(code) > maxInviteLen {
		return TableSummary{}, invalid
	}
	id, err := h.InviteID(ctx, code)
	if engine.ErrorCode(err) == engine.ENOTFOUND {
		return TableSummary{}, invalid
	}
	if err != nil {
		return TableSummary{}, err
	}
	t, err := h.table(id)
	if engine.ErrorCode(err) == engine.ENOTFOUND {
		return TableSummary{}, invalid
	}
	if err != nil {
		return TableSummary{}, err
	}
	// The loaded table's code is the truth: the store may lag a rotation.
	a := t.access.Load()
	if !a.invited(code) || a.sees(id, Viewer{PlayerID: playerID, Invite: code}) != nil {
		return TableSummary{}, invalid
	}
	return *t.summary.Load(), nil
}

// Patch changes table id's settings for its owner p
// ([engine.SettingsPatch.Validate]) and returns its summary.
func (h *Hub) Patch(ctx context.Context, id string, p engine.Player, patch engine.SettingsPatch) (TableSummary, error) {
	patch, err := patch.Validate()
	if err != nil {
		return TableSummary{}, err
	}
	var out TableSummary
	err = h.byOwner(ctx, id, p, "settings", func(t *table) error {
		meta := t.meta
		next := t.st.Clone()
		own := &store.SettingsChange{Name: patch.Name, Private: patch.Private}
		if patch.Name != nil {
			meta.Name = *patch.Name
		}
		if patch.Private != nil {
			meta.Private = *patch.Private
		}
		if patch.NPCHP != nil {
			next.Config.NPCHP = npcHPConfig(*patch.NPCHP)
		}
		if patch.TurnTimeoutS != nil {
			next.Config.TurnTimeoutS = *patch.TurnTimeoutS
		}
		meta.Config = next.Config
		ev := engine.NewEvent(engine.SystemData{Code: CodeModeration, Action: "settings", By: ByOwner,
			Message: "The table's owner changed its settings."})
		if err := t.commit(ctx, store.Commit{State: next, Settings: own, Events: []engine.Event{ev}}, t.turnLabel()); err != nil {
			return fmt.Errorf("settings of %s: %w", t.id, err)
		}
		cfg := next.Config
		// Field by field: readers off the goroutine read meta.CreatedAt.
		t.meta.Name, t.meta.Private, t.meta.Config = meta.Name, meta.Private, meta.Config
		t.setState(next)
		if t.job != nil { // the running turn's state must not bring the old settings back
			t.sinceJob = append(t.sinceJob, func(st *engine.State) { st.Config = cfg })
		}
		t.updateSummary()
		if patch.Private != nil && *patch.Private {
			t.closeUnseen()
		}
		t.armTimer()
		t.stateChanged()
		out = *t.summary.Load()
		return nil
	})
	return out, err
}

// npcHPConfig is engine.Config.NPCHP of a setting: exact is "".
func npcHPConfig(v string) string {
	if v == engine.NPCHPExact {
		return ""
	}
	return v
}

// npcHPLabel is the summary's npc_hp of a Config.NPCHP.
func npcHPLabel(v string) string {
	if v == "" {
		return engine.NPCHPExact
	}
	return v
}

// Kick frees seat at table id (PROTOCOL.md "Table owners"): its owner may
// free any seat, a seated player only their own (then it is leaving). The
// player's sockets close with 4003 and a reason; player_left says "by":
// "owner". ENOTFOUND if nobody sits there.
func (h *Hub) Kick(ctx context.Context, id string, p engine.Player, seat string) error {
	t, err := h.table(id)
	if err != nil {
		return err
	}
	a := t.access.Load()
	if err := a.sees(id, Viewer{PlayerID: p.ID}); err != nil {
		return err
	}
	if !a.owns(p.ID) {
		return t.callOpen(ctx, func() error {
			if s, ok := t.seatOf(p.ID); !ok || s.Seat != seat {
				return engine.Errorf(engine.EFORBIDDEN, "Only the table's owner may free another player's seat.")
			}
			return t.leave(ctx, p)
		})
	}
	return h.byOwner(ctx, id, p, "kick", func(t *table) error {
		for _, s := range t.seats {
			if s.Seat == seat {
				if s.PlayerID == p.ID {
					return t.leave(ctx, p)
				}
				return t.freeSeat(ctx, s, removal{by: ByOwner, code: CloseFreed, reason: ReasonOwner})
			}
		}
		return engine.Errorf(engine.ENOTFOUND, "Nobody sits in seat %q.", seat)
	})
}

// checkPlayerID refuses what cannot be a player id.
func checkPlayerID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z'))
	}) {
		return engine.Errorf(engine.EINVALID, "player_id is not a player id.")
	}
	return nil
}

// Ban bans player target from table id, for its owner p: their seat is
// freed, every socket of theirs there closes with 4003, and they can no
// longer sit, watch or use an invite there. Banning twice is a no-op.
func (h *Hub) Ban(ctx context.Context, id string, p engine.Player, target string) error {
	if err := checkPlayerID(target); err != nil {
		return err
	}
	// The owner's right is checked first: a non-owner learns nothing of
	// which players exist.
	if _, err := h.ownerOf(id, p.ID, "Only the table's owner may do this."); err != nil {
		return err
	}
	if err := h.playerExists(ctx, target); err != nil {
		return err
	}
	return h.byOwner(ctx, id, p, "ban", func(t *table) error {
		if target == p.ID {
			return engine.Errorf(engine.EINVALID, "You cannot ban yourself from your own table.")
		}
		if t.own.bans[target] {
			return nil
		}
		ban := &store.SettingsChange{Ban: target, BannedAt: t.h.cfg.Now().UTC()}
		banned := func() {
			bans := make(map[string]bool, len(t.own.bans)+1)
			for k := range t.own.bans {
				bans[k] = true
			}
			bans[target] = true
			t.own.bans = bans
			t.publishAccess()
		}
		if s, ok := t.seatOf(target); ok {
			// The ban, the seat freed and player_left: one commit.
			r := removal{by: ByOwner, settings: ban, code: CloseFreed, reason: ReasonBanned, applied: banned}
			if err := t.freeSeat(ctx, s, r); err != nil {
				return fmt.Errorf("ban at %s: %w", t.id, err)
			}
		} else {
			if err := t.commit(ctx, store.Commit{Settings: ban}, t.turnLabel()); err != nil {
				return fmt.Errorf("ban at %s: %w", t.id, err)
			}
			banned()
		}
		for cl := range t.clients {
			if cl.playerID() == target {
				cl.close(CloseFreed, ReasonBanned)
			}
		}
		return nil
	})
}

// players is a store that can look a player up; internal/db and
// internal/pgdb are.
type players interface {
	Player(ctx context.Context, id string) (engine.Player, error)
}

// playerExists returns ENOTFOUND unless the store knows player id: a ban
// of nobody would be stored and listed. A store that cannot say lets it
// through.
func (h *Hub) playerExists(ctx context.Context, id string) error {
	s := h.cfg.Store
	if d, ok := s.(deadlined); ok {
		s = d.s
	}
	ps, ok := s.(players)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if _, err := ps.Player(ctx, id); err != nil {
		if engine.ErrorCode(err) == engine.ENOTFOUND {
			return engine.Errorf(engine.ENOTFOUND, "No such player.")
		}
		return fmt.Errorf("ban: look up player %s: %w", id, err)
	}
	return nil
}

// Unban lifts player target's ban at table id, for its owner p.
// ENOTFOUND if they are not banned.
func (h *Hub) Unban(ctx context.Context, id string, p engine.Player, target string) error {
	if err := checkPlayerID(target); err != nil {
		return err
	}
	return h.byOwner(ctx, id, p, "unban", func(t *table) error {
		if !t.own.bans[target] {
			return engine.Errorf(engine.ENOTFOUND, "That player is not banned here.")
		}
		if err := t.commit(ctx, store.Commit{Settings: &store.SettingsChange{Unban: target}}, t.turnLabel()); err != nil {
			return fmt.Errorf("unban at %s: %w", t.id, err)
		}
		bans := map[string]bool{}
		for k := range t.own.bans {
			if k != target {
				bans[k] = true
			}
		}
		t.own.bans = bans
		t.publishAccess()
		return nil
	})
}

// OwnerPause pauses table id for its owner p, as the operator's Pause
// does; the audit says "by": "owner".
func (h *Hub) OwnerPause(ctx context.Context, id string, p engine.Player) error {
	return h.byOwner(ctx, id, p, "pause", func(t *table) error {
		return t.setPausedMark(ctx, true, "pause", "The table's owner paused the table. Actions wait until it resumes.", ByOwner)
	})
}

// OwnerResume undoes OwnerPause (or the operator's pause).
func (h *Hub) OwnerResume(ctx context.Context, id string, p engine.Player) error {
	return h.byOwner(ctx, id, p, "resume", func(t *table) error {
		return t.setPausedMark(ctx, false, "resume", "The table's owner resumed the table.", ByOwner)
	})
}

// turnLabel is the id of the table's current turn.
func (t *table) turnLabel() string { return engine.TurnLabel(t.st.Game.Turn) }

// MyTable is a table in a player's own list (GET /api/players/me/tables).
type MyTable struct {
	TableSummary
	Seat        string       `json:"seat,omitempty"`
	Character   *MyCharacter `json:"character,omitempty"`
	Owner       bool         `json:"owner"`
	LastEventAt time.Time    `json:"last_event_at"`
}

// MyCharacter is the player's character at a table, in short.
type MyCharacter struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Class string `json:"class"`
	Level int    `json:"level"`
}

// MyTables lists every table player playerID owns or sits at, closed
// ones included (status "closed"), newest activity first. A loaded
// table's summary is its live one.
func (h *Hub) MyTables(ctx context.Context, playerID string) ([]MyTable, error) {
	rows, err := h.cfg.Store.PlayerTables(ctx, playerID)
	if err != nil {
		return nil, err
	}
	out := make([]MyTable, 0, len(rows))
	for _, r := range rows {
		h.mu.RLock()
		t, loaded := h.tables[r.Table.ID]
		h.mu.RUnlock()
		m := MyTable{Seat: r.Seat, Owner: r.Table.OwnerID == playerID, LastEventAt: r.LastEventAt}
		if loaded {
			m.TableSummary = *t.summary.Load()
		} else {
			m.TableSummary = h.summaryOf(r.Table, r.Mode, r.Seated, 0)
		}
		if r.Flags.Closed {
			m.Status = "closed"
		}
		if r.Seat != "" {
			c := MyCharacter(r.Character)
			m.Character = &c
		}
		out = append(out, m)
	}
	return out, nil
}

// ListFor is List as player playerID sees it: the public tables and the
// private ones they own or sit at.
func (h *Hub) ListFor(ctx context.Context, playerID string) []TableSummary {
	all := h.list()
	mine := map[string]bool{}
	if playerID != "" && slices.ContainsFunc(all, func(s TableSummary) bool { return s.Private }) {
		ids, err := h.cfg.Store.PrivateTableIDs(ctx, playerID)
		if err != nil {
			h.log.Warn("list the private tables of a player", "err", err)
		}
		for _, id := range ids {
			mine[id] = true
		}
	}
	out := all[:0]
	for _, s := range all {
		if !s.Private || mine[s.ID] {
			out = append(out, s)
		}
	}
	return out
}
