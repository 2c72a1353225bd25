package hub

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// ClosePlayer closes every socket of player playerID, on every loaded
// table and in any role, with 4003 and reason; it returns how many it
// closed. Tables not in memory have no socket. It does not free seats:
// the operator's server-wide ban refuses the player's token instead, so
// an unban gives them back their seats. Until AllowPlayer, a socket of
// theirs still joining (its token read before the ban) is refused too.
func (h *Hub) ClosePlayer(ctx context.Context, playerID, reason string) int {
	if playerID == "" {
		return 0
	}
	h.closedPlayers.Store(playerID, reason)
	return h.eachLoaded(ctx, "close a banned player's sockets", playerID, func(t *table) int { return t.closePlayer(playerID, reason) })
}

// eachLoaded runs f on the goroutine of every loaded table and sums what
// it returns.
func (h *Hub) eachLoaded(ctx context.Context, what, playerID string, f func(t *table) int) int {
	h.mu.RLock()
	ts := make([]*table, 0, len(h.tables))
	for _, t := range h.tables {
		ts = append(ts, t)
	}
	h.mu.RUnlock()
	var n atomic.Int64
	for _, t := range ts {
		err := t.callSystem(ctx, func() error {
			n.Add(int64(f(t)))
			return nil
		})
		if err != nil {
			h.log.Warn(what, "table", t.id, "player", playerID, "err", err)
		}
	}
	return int(n.Load())
}

// closePlayer closes the player's sockets at t with 4003 and reason.
func (t *table) closePlayer(playerID, reason string) int {
	n := 0
	for c := range t.clients {
		if c.playerID() == playerID {
			c.close(CloseFreed, reason)
			n++
		}
	}
	return n
}

// ReasonErased is the close reason of an erased player's sockets.
const ReasonErased = "erased by the operator"

// ErasePlayer prepares the erasure of player playerID in the loaded
// tables, before the store erases their rows: their sockets close with
// 4003, their name leaves the seats in memory, and their characters'
// backstories are removed from the state (committed, so that no later
// commit writes one back; a running turn drops it too when it lands).
func (h *Hub) ErasePlayer(ctx context.Context, playerID string) error {
	if playerID == "" {
		return nil
	}
	// A socket of theirs still joining is refused too (see ClosePlayer).
	h.closedPlayers.Store(playerID, ReasonErased)
	var errs atomic.Int64
	h.eachLoaded(ctx, "erase a player", playerID, func(t *table) int {
		t.closePlayer(playerID, ReasonErased)
		for i := range t.seats {
			if t.seats[i].PlayerID == playerID {
				t.seats[i].PlayerName = store.ErasedName
			}
		}
		if !t.eraseRecent(playerID) {
			// A commit in flight failed: the table restarts from the
			// store, and the erasure must be tried again.
			errs.Add(1)
			return 0
		}
		blank := func(st *engine.State) bool {
			changed := false
			for _, c := range st.Party {
				if c.PlayerID == playerID && c.Backstory != "" {
					c.Backstory, changed = "", true
				}
			}
			return changed
		}
		if t.involves(playerID) {
			// The store deletes the save points of the player's tables
			// with the erasure: a retcon must not bring their name or
			// backstory back from memory either.
			t.own.points = nil
			t.stateChanged() // undoable is 0 now
		}
		next := t.st.Clone()
		if !blank(next) {
			return 0
		}
		if err := t.commit(ctx, store.Commit{State: next}, engine.TurnLabel(next.Game.Turn)); err != nil {
			h.log.Warn("erase a player's backstory", "table", t.id, "player", playerID, "err", err)
			errs.Add(1)
			return 0
		}
		t.setState(next)
		if t.job != nil {
			t.sinceJob = append(t.sinceJob, func(st *engine.State) { blank(st) })
		}
		t.updateSummary()
		return 1
	})
	if errs.Load() > 0 {
		return fmt.Errorf("erase player %s: %d tables could not save the erasure", playerID, errs.Load())
	}
	return nil
}

// involves reports whether the player sits at the table, plays a
// character of its party, or is named by an open action, a recent event
// or a save point: the tables whose save points the store's erasure
// deletes (seats and actions of the player) as far as memory tells.
func (t *table) involves(playerID string) bool {
	quoted := []byte(strconv.Quote(playerID))
	return slices.ContainsFunc(t.seats, func(s engine.Seat) bool { return s.PlayerID == playerID }) ||
		slices.ContainsFunc(t.st.Party, func(c *engine.Character) bool { return c.PlayerID == playerID }) ||
		slices.ContainsFunc(t.own.points, func(p store.SavePoint) bool {
			return p.Action.PlayerID == playerID || bytes.Contains(p.State, quoted)
		}) ||
		slices.ContainsFunc(t.recent, func(e engine.Event) bool {
			_, named := engine.ErasePlayerFrom(e, playerID, store.ErasedName)
			return named
		})
}

// eraseRecent makes the events the table holds in memory say what the
// store's will once erased: the snapshot's recent events and a resume's
// gap come from them, until the table unloads. The commits in flight are
// waited for first, so that every event of the player is in the store
// before its erasure and in recent now. The history cache is dropped: the
// next turn reads the erased history back. It reports false if a commit
// in flight failed and the table restarts instead.
func (t *table) eraseRecent(playerID string) bool {
	t.drain()
	if t.evicted {
		return false
	}
	for i, e := range t.recent {
		if r, ok := engine.ErasePlayerFrom(e, playerID, store.ErasedName); ok {
			t.recent[i] = r
		}
	}
	t.hist.invalidate()
	return true
}

// AllowPlayer lifts ClosePlayer's refusal of playerID's joining sockets
// (the operator's unban).
func (h *Hub) AllowPlayer(playerID string) { h.closedPlayers.Delete(playerID) }

// closedReason is the 4003 reason ClosePlayer gave playerID, or "".
func (h *Hub) closedReason(playerID string) string {
	r, _ := h.closedPlayers.Load(playerID)
	s, _ := r.(string)
	return s
}
