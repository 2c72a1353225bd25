package tavern

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"tavern/internal/hub"
)

// onlinePath is where a node answers, to another node only (a signed hop),
// who is connected to it: a player's socket lives on the node that runs
// their table, so "who is online" asks every live node.
const onlinePath = "/internal/online"

// onlineWait bounds the wait for one node's answer.
const onlineWait = 3 * time.Second

// serveOnline answers another node's onlinePath with this hub's players.
func (rt *router) serveOnline(w http.ResponseWriter, r *http.Request) {
	players := rt.online(r.Context())
	if players == nil {
		players = []hub.OnlinePlayer{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(players)
}

// onlineEverywhere lists the players connected to any live node: this
// hub's, and each other node's asked over HTTP. A node that does not
// answer is left out, said in the log.
func (rt *router) onlineEverywhere(ctx context.Context) ([]hub.OnlinePlayer, error) {
	nodes, err := rt.pg.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	out := rt.online(ctx)
	me := rt.pg.NodeID()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, n := range nodes {
		if n.ID == me || n.State == "dead" || n.Addr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ps, err := rt.askOnline(ctx, n.Addr)
			if err != nil {
				rt.log.Warn("who is online: a node did not answer; its players are left out", "node", n.ID, "addr", n.Addr, "err", err)
				return
			}
			mu.Lock()
			out = append(out, ps...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out, nil
}

func (rt *router) askOnline(ctx context.Context, addr string) ([]hub.OnlinePlayer, error) {
	ctx, cancel := context.WithTimeout(ctx, onlineWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+onlinePath, nil)
	if err != nil {
		return nil, err
	}
	rt.sign(req, "")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", onlinePath, res.Status)
	}
	var ps []hub.OnlinePlayer
	if err := json.NewDecoder(res.Body).Decode(&ps); err != nil {
		return nil, fmt.Errorf("%s: %w", onlinePath, err)
	}
	return ps, nil
}

// whoIsOnline lists the players connected now: to every node of a
// cluster, else to this hub.
func (t *Tavern) whoIsOnline(ctx context.Context) ([]hub.OnlinePlayer, error) {
	if t.router != nil {
		return t.router.onlineEverywhere(ctx)
	}
	return t.Hub.Online(ctx), nil
}
