package hub

import (
	"context"
	"sync"
)

// OnlinePlayer is a player with an open socket at a table.
type OnlinePlayer struct {
	PlayerID string
	Name     string
	TableID  string
	Table    string
	Role     string // player or spectator
}

// Online lists the players connected right now, one row per table and
// role (anonymous spectators are left out), read on each loaded table's
// goroutine; tables not in memory have no socket.
func (h *Hub) Online(ctx context.Context) []OnlinePlayer {
	var mu sync.Mutex
	var out []OnlinePlayer
	h.eachLoaded(ctx, "list who is online", "", func(t *table) int {
		seen := map[[2]string]bool{}
		for c := range t.clients {
			if c.player == nil {
				continue
			}
			k := [2]string{c.player.ID, roleLabel(c.role)}
			if seen[k] {
				continue
			}
			seen[k] = true
			mu.Lock()
			out = append(out, OnlinePlayer{PlayerID: c.player.ID, Name: c.player.Name, TableID: t.id, Table: t.meta.Name, Role: k[1]})
			mu.Unlock()
		}
		return 0
	})
	return out
}
