package hub

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Bounds on sockets (PROTOCOL.md "Limits and close codes"): how many one
// player and one client address may hold open, and how long a peer may
// leave a ping unanswered.

// socketCounts counts the open websockets by player and by client
// address. Its zero value is ready; safe for concurrent use. An entry
// lives only while its count is above zero, so the maps stay as large as
// the sockets open.
type socketCounts struct {
	mu       sync.Mutex
	byPlayer map[string]int
	byAddr   map[string]int
}

// take counts one socket more for player (empty for an anonymous
// spectator) and addr, unless either is at its limit. It reports whether
// it did; a socket taken is given back with give.
func (s *socketCounts) take(player, addr string, perPlayer, perAddr int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byPlayer == nil {
		s.byPlayer, s.byAddr = map[string]int{}, map[string]int{}
	}
	if s.byAddr[addr] >= perAddr || (player != "" && s.byPlayer[player] >= perPlayer) {
		return false
	}
	s.byAddr[addr]++
	if player != "" {
		s.byPlayer[player]++
	}
	return true
}

// give returns a socket take counted.
func (s *socketCounts) give(player, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAddr[addr]--; s.byAddr[addr] <= 0 {
		delete(s.byAddr, addr)
	}
	if player == "" {
		return
	}
	if s.byPlayer[player]--; s.byPlayer[player] <= 0 {
		delete(s.byPlayer, player)
	}
}

// remoteAddr is the address sockets are counted by: the peer's IP.
// Forwarding headers are not trusted, as anyone can send them.
func remoteAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// keepAlive pings the peer every half interval and closes the socket
// when a pong does not come within the other half: a dead or half-open
// peer is reaped within interval. The library answers the peer's pings
// and reads our pongs in the reader (readLoop), which always runs. Only
// a ping in flight holds a goroutine. stopPings ends it once the socket
// is closed.
func (c *client) keepAlive(interval time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pingEvery = interval / 2
	c.pinger = time.AfterFunc(c.pingEvery, c.ping)
}

// ping runs on the pinger's goroutine.
func (c *client) ping() {
	if c.isClosing() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.pingEvery)
	err := c.conn.Ping(ctx)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		// A dead peer takes no queued frame, and the writer's close
		// handshake is bounded by closeTimeout.
		c.closeLocked(websocket.StatusPolicyViolation, "ping timeout", false)
		return
	}
	if !c.closing {
		c.pinger.Reset(c.pingEvery)
	}
}

// stopPings stops keepAlive's pings.
func (c *client) stopPings() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinger != nil {
		c.pinger.Stop()
	}
}
