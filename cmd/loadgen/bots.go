package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/hub"
)

func post(ctx context.Context, base, path, token string, body any, into any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(res.Body)
		return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, bytes.TrimSpace(msg))
	}
	return json.NewDecoder(res.Body).Decode(into)
}

func newPlayer(ctx context.Context, base, name string) (token, id string, err error) {
	var p struct {
		Token string `json:"token"`
		ID    string `json:"player_id"`
	}
	err = post(ctx, base, "/api/players", "", map[string]string{"name": name}, &p)
	return p.Token, p.ID, err
}

func playTable(ctx context.Context, c config, n int, st *stats) error {
	owner, _, err := newPlayer(ctx, c.via(n), fmt.Sprintf("Owner %d", n))
	if err != nil {
		return err
	}
	var tbl struct {
		ID string `json:"id"`
	}
	if err := post(ctx, c.via(n), "/api/tables", owner, map[string]any{"name": fmt.Sprintf("Load %d", n), "seats": c.players}, &tbl); err != nil {
		return err
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i := range c.spectators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := spectate(ctx, c.via(n+1+c.players+i), tbl.ID, done, st); err != nil {
				st.fail(fmt.Errorf("spectator %d: %w", i, err))
			}
		}()
	}
	var players sync.WaitGroup
	var acting atomic.Int64
	acting.Store(int64(c.players))
	for i := range c.players {
		players.Add(1)
		go func() {
			defer players.Done()
			if err := playSeat(ctx, c, c.via(n+1+i), tbl.ID, i, &acting, st); err != nil {
				st.fail(fmt.Errorf("player %d: %w", i, err))
			}
		}()
	}
	players.Wait()
	close(done)
	wg.Wait()
	return nil
}

// batchFrames: sockets ask for batched messages (-batch), as the table
// page does.
var batchFrames bool

func dial(ctx context.Context, base, tableID, role, token string) (*websocket.Conn, error) {
	u := strings.Replace(base, "http", "ws", 1) + "/ws/tables/" + tableID + "?role=" + role
	if batchFrames {
		u += "&batch=1"
	}
	if token != "" {
		u += "&token=" + url.QueryEscape(token)
	}
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Subprotocols: []string{hub.Subprotocol}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(1 << 20)
	closeWith(ctx, c)
	return c, nil
}

// reader pumps a socket's frames into a channel until it closes. A
// spectator's frames are only counted (follow is false): the channel
// carries none, and closes with the socket. A player's channel carries only
// the frames it follows (readFrame). A batched message (-batch) is split
// into its frames.
func reader(ctx context.Context, c *websocket.Conn, st *stats, follow bool) <-chan frame {
	ch := make(chan frame, 1024)
	go func() {
		defer close(ch)
		var frames [][]byte
		readMessages(c, func(msg []byte) error {
			frames = framesOf(msg, frames)
			return pass(ctx, frames, ch, st, follow)
		})
	}()
	return ch
}

// pass counts a message's frames and sends those a player follows.
func pass(ctx context.Context, frames [][]byte, ch chan<- frame, st *stats, follow bool) error {
	for _, raw := range frames {
		if f, ok := readFrame(raw, st, follow); ok {
			select {
			case ch <- f:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// readMessages calls fn with each message c receives until c closes or fn
// fails. The message is only fn's until fn returns: messages are read into
// pooled buffers, and without a context, which would cost the library a
// context.AfterFunc per read; whoever dials c closes it when its context
// ends (closeWith).
func readMessages(c *websocket.Conn, fn func(msg []byte) error) {
	for {
		_, r, err := c.Reader(context.Background())
		if err != nil {
			return
		}
		msg := msgBufs.Get().(*bytes.Buffer)
		msg.Reset()
		if _, err = msg.ReadFrom(r); err == nil {
			err = fn(msg.Bytes())
		}
		if msg.Cap() <= 64<<10 {
			msgBufs.Put(msg)
		}
		if err != nil {
			return
		}
	}
}

// msgBufs hold messages while they are read: a buffer per socket would
// keep each socket's largest message (its snapshot) for the whole run.
var msgBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// closeWith closes c when ctx ends, as a read given ctx would.
func closeWith(ctx context.Context, c *websocket.Conn) {
	context.AfterFunc(ctx, func() { c.CloseNow() })
}

func spectate(ctx context.Context, base, tableID string, done <-chan struct{}, st *stats) error {
	c, err := dial(ctx, base, tableID, "spectator", "")
	if err != nil {
		return err
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	frames := reader(ctx, c, st, false)
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return nil
		case _, ok := <-frames:
			if !ok {
				return errors.New("spectator socket closed")
			}
		}
	}
}

// script is what a player says outside a fight; the fights happen at the
// mill.
var script = []string{"I look around", "we go to the old mill", "I attack Snikket", "I look around",
	"back to the square", "I go to the Crooked Lantern inn", "I ask Maren about the goblins", "back to the square",
	"we go to the old mill", "I search the bodies for loot", "back to the square", "I go to Market Lane",
	"I ask Tobin about his wares", "back to the square"}

// playSeat plays one seat: c.actions actions, then it keeps taking its
// initiative turns (striking) until every player of the table is done, as
// a real player stays until the fight is over. It strikes, not defends:
// a player whose character is knocked out is skipped in the initiative and
// waits for the fight to end (after it, the character comes to), so a
// fight the others only defended in never ended, and the run stalled
// until the 2-minute turn timer (the stalls of earlier sessions' runs).
func playSeat(ctx context.Context, c config, node, tableID string, i int, acting *atomic.Int64, st *stats) error {
	tok, playerID, err := newPlayer(ctx, node, fmt.Sprintf("Bot %d", i))
	if err != nil {
		return err
	}
	var seat struct {
		Seat string `json:"seat"`
	}
	classes := []string{"warrior", "cleric", "rogue", "mage"}
	if err := post(ctx, node, "/api/tables/"+tableID+"/seats", tok, map[string]any{"character": map[string]any{"name": fmt.Sprintf("Bot%d", i), "class": classes[i%4]}}, &seat); err != nil {
		return err
	}
	conn, err := dial(ctx, node, tableID, "player", tok)
	if err != nil {
		return err
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	frames := reader(ctx, conn, st, true)
	me := "pc:" + seat.Seat
	send := func(id, text string) error {
		b, _ := json.Marshal(map[string]string{"type": "act", "id": id, "text": text})
		return conn.Write(ctx, websocket.MessageText, b)
	}
	inCombat, myTurn := false, false
	acted, step := 0, i
	rng := rand.New(rand.NewPCG(uint64(i), 7)) // seeded: runs think alike
	// think pauses for d, reading the table meanwhile (a socket that is
	// not read falls behind and is closed).
	think := func(d time.Duration) error {
		pause := time.NewTimer(d)
		defer pause.Stop()
		for {
			select {
			case <-pause.C:
				return nil
			case f, ok := <-frames:
				if !ok {
					return errors.New("socket closed while its player thought")
				}
				inCombat, myTurn = track(f, me, inCombat, myTurn)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	if c.think > 0 {
		// Players who think do not all act in the same millisecond: the
		// first act comes within one think time of sitting down.
		if err := think(time.Duration(rng.Int64N(int64(c.think) + 1))); err != nil {
			return err
		}
	}
	for acted < c.actions {
		// In a fight, wait for our turn; outside, act (one at a time).
		for inCombat && !myTurn {
			f, ok := <-frames
			if !ok {
				return fmt.Errorf("socket closed waiting for its turn (acted %d)", acted)
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
		}
		text := script[step%len(script)]
		if inCombat {
			text = "I strike the nearest goblin"
		} else {
			step++
		}
		id := fmt.Sprintf("load-%d", acted)
		sent := time.Now()
		if err := send(id, text); err != nil {
			return err
		}
		// This act uses our turn: the next is ours only once a turn event
		// says so (it may come before or after the narration).
		hadTurn := myTurn
		myTurn = false
		var ackAt time.Duration
		actionID := ""
		resolved := false
		for !resolved {
			var f frame
			var ok bool
			select {
			case f, ok = <-frames:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !ok {
				return fmt.Errorf("socket closed waiting for action %q (%q, ack after %s, in combat %v)", actionID, text, ackAt, inCombat)
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
			switch {
			case f.ID == id && f.Type == "error":
				// Refused (not our turn after all, or rate limited): the
				// action was not taken; wait a moment and try again. Only
				// not_your_turn says the turn was not ours; refused
				// otherwise, we still hold it.
				st.refusals.Add(1)
				if f.Code != "not_your_turn" {
					myTurn = myTurn || hadTurn
				}
				time.Sleep(100 * time.Millisecond)
				resolved = true
				acted--
			case f.ID == id && f.Type == "ack":
				ackAt = time.Since(sent)
			case f.Type == "event" && f.Kind == "action" && f.PlayerID == playerID:
				actionID = f.ActionID
			case f.Type == "event" && f.Kind == "narration" && actionID != "" && f.ActionID == actionID:
				st.record(sent, ackAt, time.Since(sent), acted == 0)
				st.acts.Add(1)
				resolved = true
			case f.Type == "event" && f.Kind == "combat_started":
				st.fights.Add(1)
			}
		}
		acted++
		if c.think > 0 {
			if err := think(c.think*3/4 + time.Duration(rng.Int64N(int64(c.think/2)+1))); err != nil {
				return err
			}
		}
	}
	acting.Add(-1)
	for n := 0; acting.Load() > 0; {
		// Our turn may have come before we got here (while we thought
		// or waited for our last narration): the fight waits for us.
		if inCombat && myTurn {
			n++
			myTurn = false
			if err := send(fmt.Sprintf("stay-%d", n), "I strike the nearest goblin"); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case f, ok := <-frames:
			if !ok {
				return errors.New("socket closed while the others played")
			}
			inCombat, myTurn = track(f, me, inCombat, myTurn)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// track follows the fight: whether one is on and whether it is our turn.
func track(f frame, me string, inCombat, myTurn bool) (bool, bool) {
	if f.Type != "event" {
		return inCombat, myTurn
	}
	switch f.Kind {
	case "combat_started":
		return true, false
	case "combat_ended":
		return false, false
	case "turn":
		return true, f.Entry == me
	}
	return inCombat, myTurn
}
