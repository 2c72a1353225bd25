package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
)

// TestFullGame plays the built-in adventure through the websocket with the
// offline narrator: two players and a spectator explore, trigger combat,
// fight in initiative order (an out-of-turn act is refused and changes
// nothing), win, and return to narrative mode with last_combat_result. The
// spectator must receive exactly the same numbered events, with no gaps.
func TestFullGame(t *testing.T) {
	e := newEnv(t, 2) // a seed where two plain attackers beat the goblins
	tid := e.table(hub.TableSpec{})
	p1, tok1 := e.player("Ann")
	p2, tok2 := e.player("Bob")
	c1 := e.sit(tid, p1, "Aldric", "warrior")
	c2 := e.sit(tid, p2, "Brina", "rogue")
	seatOf := map[string]*wsClient{}

	spec := e.dial(tid, "spectator", "", 0)
	a := e.dial(tid, "player", tok1, -1)
	b := e.dial(tid, "player", tok2, -1)
	seatOf["pc:"+c1.Seat], seatOf["pc:"+c2.Seat] = a, b
	for _, c := range []*wsClient{a, b} {
		if f := c.next(); f.Type != "welcome" {
			t.Fatalf("first frame %s, want welcome", f.Type)
		}
		if f := c.next(); f.Type != "snapshot" {
			t.Fatalf("second frame %s, want snapshot", f.Type)
		}
	}
	if f := spec.next(); f.Type != "welcome" {
		t.Fatalf("spectator: %s", f.Type)
	}

	// Explore.
	if f := a.act("a1", "I look around the square"); f.Type != "ack" || f.Status != "accepted" {
		t.Fatalf("act: %+v", f)
	}
	mine := a.event("action")
	if got := dataOf(a.event("narration"))["action_id"]; got == nil || got != dataOf(mine)["action_id"] {
		t.Fatalf("the narration resolving an action names it: %v, want %v", got, dataOf(mine)["action_id"])
	}
	b.act("b1", "Let's go to the old mill")
	n := b.event("narration")
	if !strings.Contains(string(n.Data), "Old Mill") {
		t.Fatalf("narration %s", n.Data)
	}
	// The same client id is not applied twice.
	if f := b.act("b1", "Let's go to the old mill"); f.Type != "ack" {
		t.Fatalf("retried act: %+v", f)
	}

	// Trigger combat.
	a.act("a2", "I attack Snikket with my sword")
	started := a.event("combat_started")
	init := dataOf(started)["initiative"].([]any)
	if len(init) != 6 || init[0].(map[string]any)["id"] != "dm" {
		t.Fatalf("initiative %v", init)
	}
	a.event("mode")

	// Fight in initiative order. Each `turn` event names the entry; when
	// it is a PC, first the other player tries out of turn.
	acts, refused := 0, 0
	var outcome string
	var endSeq int64
	for outcome == "" {
		f := a.until("turn or end", func(f frame) bool {
			return f.Type == "event" && (f.Kind == "turn" || f.Kind == "combat_ended")
		})
		if f.Kind == "combat_ended" {
			outcome, _ = dataOf(f)["outcome"].(string)
			endSeq = f.Seq
			break
		}
		entry := entryOf(f)
		me, ok := seatOf[entry]
		if !ok || dataOf(f)["resolution"] != nil {
			continue // a DM turn: it plays by itself
		}
		other := a
		if me == a {
			other = b
		}
		if refused < 2 {
			snap, _ := e.hub.Snapshot(context.Background(), tid)
			if r := other.act(fmt.Sprintf("x%d", refused), "I attack out of turn"); r.Type != "error" || r.Code != "not_your_turn" {
				t.Fatalf("out-of-turn act: %+v", r)
			}
			after, _ := e.hub.Snapshot(context.Background(), tid)
			if after.Seq != snap.Seq || !reflect.DeepEqual(after.Combat, snap.Combat) {
				t.Fatalf("a refused act changed the table: seq %d→%d", snap.Seq, after.Seq)
			}
			refused++
		}
		acts++
		if r := me.act(fmt.Sprintf("f%d", acts), "I strike the nearest goblin"); r.Type != "ack" {
			t.Fatalf("in-turn act refused: %+v", r)
		}
		if acts > 100 {
			t.Fatal("fight did not end")
		}
	}
	if engine.Outcome(outcome) != engine.OutcomePlayerWin {
		t.Fatalf("outcome %q, want player_win (seed 2)", outcome)
	}
	a.event("mode")
	snap, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Mode != engine.ModeNarrative || snap.Combat != nil || snap.LastCombat == nil || snap.LastCombat.Outcome != engine.OutcomePlayerWin {
		t.Fatalf("after the fight: mode %s combat %v result %+v", snap.Mode, snap.Combat, snap.LastCombat)
	}
	// Back in narrative mode the narrative agent hears of the result.
	a.act("a3", "I look around")
	post := a.until("narration after the fight", func(f frame) bool { return f.Kind == "narration" && f.Seq > endSeq+1 })
	if !strings.Contains(string(post.Data), "won") {
		t.Errorf("narration after the fight does not mention it: %s", post.Data)
	}

	// The spectator saw exactly the same events, numbered without gaps.
	last := a.events[len(a.events)-1].Seq
	for spec.events == nil || spec.events[len(spec.events)-1].Seq < last {
		spec.next()
	}
	for i, f := range spec.events {
		if f.Seq != int64(i+1) {
			t.Fatalf("spectator event %d has seq %d: gap", i, f.Seq)
		}
	}
	bySeq := map[int64]string{}
	for _, f := range spec.events {
		bySeq[f.Seq] = string(f.Raw)
	}
	for _, f := range a.events {
		if bySeq[f.Seq] != string(f.Raw) {
			t.Fatalf("event %d differs:\nplayer:    %s\nspectator: %s", f.Seq, f.Raw, bySeq[f.Seq])
		}
	}
	// And the store agrees with what was broadcast.
	stored, err := e.hub.Events(context.Background(), tid, 0, 500)
	if err != nil || int64(len(stored)) != last {
		t.Fatalf("stored %d events (err %v), broadcast %d", len(stored), err, last)
	}
	t.Logf("%d events, %d PC actions, outcome %s", last, acts, outcome)
}

// TestRestartMidCombat closes the store mid-combat and reopens it: the
// table resumes in the same mode, round and turn.
func TestRestartMidCombat(t *testing.T) {
	e := newEnv(t, 7)
	tid := e.table(hub.TableSpec{})
	p1, tok1 := e.player("Ann")
	c1 := e.sit(tid, p1, "Aldric", "warrior")
	a := e.dial(tid, "player", tok1, -1)
	a.startFight()
	// Wait for Aldric's first turn, and act once.
	a.until("my turn", func(f frame) bool { return f.Kind == "turn" && entryOf(f) == "pc:"+c1.Seat })
	a.act("hit1", "I hit Snikket")
	a.until("my next turn", func(f frame) bool { return f.Kind == "turn" && entryOf(f) == "pc:"+c1.Seat })
	before, _ := e.hub.Snapshot(context.Background(), tid)

	e.shutdown()
	if st := a.closeStatus(); st != websocket.StatusGoingAway {
		t.Errorf("close status %v, want 1001 going away", st)
	}
	e.open()

	after, err := e.hub.Snapshot(context.Background(), tid)
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode != engine.ModeCombat || after.Combat == nil || after.Combat.Round != before.Combat.Round || after.Combat.Index != before.Combat.Index {
		t.Fatalf("before %+v\nafter %+v", before.Combat, after.Combat)
	}
	if !reflect.DeepEqual(after.Party, before.Party) || after.Seq != before.Seq {
		t.Errorf("party or seq changed across the restart:\n%+v seq %d\n%+v seq %d", before.Party, before.Seq, after.Party, after.Seq)
	}
	// The table plays on from there.
	a = e.dial(tid, "player", tok1, after.Seq)
	if f := a.next(); f.Type != "welcome" {
		t.Fatalf("%+v", f)
	}
	if f := a.act("hit2", "I hit Snikket"); f.Type != "ack" {
		t.Fatalf("after restart: %+v", f)
	}
	a.event("narration")
}

// blockingModel never answers until its context ends, like a model call
// in flight when the server dies.
type blockingModel struct{ started chan struct{} }

func (blockingModel) Name() string { return "blocking" }

func (m blockingModel) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	select {
	case m.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return agent.Response{}, ctx.Err()
}

// TestAcknowledgedActionResolvedOnceAfterCrash: an action acknowledged
// while the DM was mid-turn survives the server going down and is resolved
// exactly once when it comes back.
func TestAcknowledgedActionResolvedOnceAfterCrash(t *testing.T) {
	e := newEnv(t, 7)
	tid := e.table(hub.TableSpec{})
	p1, tok1 := e.player("Ann")
	e.sit(tid, p1, "Aldric", "warrior") // arrives with the offline narrator, before the model blocks
	started := make(chan struct{}, 1)
	e.shutdown()
	e.model = blockingModel{started: started}
	e.open()
	a := e.dial(tid, "player", tok1, -1)
	if f := a.act("once", "I look around"); f.Type != "ack" {
		t.Fatal(f)
	}
	act := a.event("action")
	<-started
	e.shutdown() // the turn in flight is rolled back

	e.model = offline.Narrator{}
	e.open()
	a = e.dial(tid, "player", tok1, act.Seq)
	a.event("narration")
	// Resending the same act after the restart is not applied again.
	if f := a.act("once", "I look around"); f.Type != "ack" {
		t.Fatalf("resend: %+v", f)
	}
	// A second act, played after anything the resend could have queued:
	// once it is narrated, a wrongly replayed act would be in the log.
	if f := a.act("after", "I wait"); f.Type != "ack" {
		t.Fatalf("second act: %+v", f)
	}
	var second engine.ActionData
	a.until("the second act", func(f frame) bool {
		return f.Type == "event" && f.Kind == "action" && json.Unmarshal(f.Data, &second) == nil && second.Text == "I wait"
	})
	a.until("the second act's narration", func(f frame) bool {
		var n engine.NarrationData
		return f.Type == "event" && f.Kind == "narration" && json.Unmarshal(f.Data, &n) == nil && n.ActionID == second.ActionID
	})
	evs, err := e.hub.Events(context.Background(), tid, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var actions, narrations int
	for _, ev := range evs {
		switch ev.Kind {
		case "action":
			actions++
		case "narration":
			narrations++
		}
	}
	// One intro narration, Aldric's arrival, and two actions each with its
	// resolution: the resent one was not played twice.
	if actions != 2 || narrations != 4 {
		t.Errorf("%d actions and %d narrations, want 2 and 4", actions, narrations)
	}
	data, err := e.store.LoadTable(context.Background(), tid)
	if err != nil || len(data.Pending) != 0 {
		t.Errorf("pending after resolution: %v %v", data.Pending, err)
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, 7)
	tid := e.table(hub.TableSpec{})
	p1, tok1 := e.player("Ann")
	e.sit(tid, p1, "Aldric", "warrior")

	t.Run("non-JSON keeps the socket open", func(t *testing.T) {
		c := e.dial(tid, "player", tok1, -1)
		c.next()
		c.next()
		if err := c.conn.Write(context.Background(), websocket.MessageText, []byte("hello?")); err != nil {
			t.Fatal(err)
		}
		if f := c.next(); f.Type != "error" || f.Code != "bad_request" {
			t.Fatalf("%+v", f)
		}
		c.send(map[string]string{"type": "dance", "id": "d"})
		if f := c.next(); f.Type != "error" || f.Code != "bad_request" || f.ID != "d" {
			t.Fatalf("unknown type: %+v", f)
		}
		c.send(map[string]string{"type": "ping", "id": "p"})
		if f := c.next(); f.Type != "pong" || f.ID != "p" {
			t.Fatalf("after bad input: %+v", f)
		}
		for _, bad := range []map[string]string{
			{"type": "act", "id": "e", "text": ""},
			{"type": "act", "id": "long", "text": strings.Repeat("x", 2001)},
			{"type": "say", "id": "s", "text": strings.Repeat("y", 501)},
			{"type": "act", "text": "no id"},
		} {
			c.send(bad)
			if f := c.next(); f.Type != "error" || f.Code != "bad_request" {
				t.Fatalf("%v: %+v", bad, f)
			}
		}
	})
	t.Run("oversized frame closes with 1009", func(t *testing.T) {
		c := e.dial(tid, "player", tok1, -1)
		big := fmt.Sprintf(`{"type":"act","id":"big","text":%q}`, strings.Repeat("x", 17<<10))
		_ = c.conn.Write(context.Background(), websocket.MessageText, []byte(big))
		if st := c.closeStatus(); st != websocket.StatusMessageTooBig {
			t.Errorf("close status %v, want 1009", st)
		}
	})
	t.Run("flooding: refusals carry the id, then 1008", func(t *testing.T) {
		c := e.dial(tid, "spectator", "", -1)
		c.next()
		c.next()
		for i := range 150 {
			b := []byte(fmt.Sprintf(`{"type":"ping","id":"f%d"}`, i))
			if c.conn.Write(context.Background(), websocket.MessageText, b) != nil {
				break // closed under us: expected once past the limit
			}
		}
		limited := c.until("rate_limited", func(f frame) bool { return f.Type == "error" && f.Code == "rate_limited" })
		if !strings.HasPrefix(limited.ID, "f") {
			t.Errorf("rate_limited error without the frame's id: %+v", limited)
		}
		if st := c.closeStatus(); st != websocket.StatusPolicyViolation {
			t.Errorf("close status %v, want 1008", st)
		}
	})
	t.Run("spectator act is forbidden", func(t *testing.T) {
		before, _ := e.hub.Snapshot(context.Background(), tid)
		c := e.dial(tid, "spectator", "", -1)
		c.next()
		c.next()
		if f := c.act("s1", "I attack"); f.Type != "error" || f.Code != "forbidden" {
			t.Fatalf("%+v", f)
		}
		after, _ := e.hub.Snapshot(context.Background(), tid)
		if after.Seq != before.Seq {
			t.Errorf("spectator act changed the log: %d → %d", before.Seq, after.Seq)
		}
	})
	t.Run("unseated player", func(t *testing.T) {
		_, tok := e.player("Zed")
		u := strings.Replace(e.srv.URL, "http", "ws", 1) + "/ws/tables/" + tid + "?role=player&token=" + tok
		_, resp, err := websocket.Dial(context.Background(), u, nil)
		if err == nil || resp == nil || resp.StatusCode != 403 {
			t.Errorf("unseated player dial: %v %v", err, resp)
		}
	})
	t.Run("chat is broadcast, never an action", func(t *testing.T) {
		c := e.dial(tid, "player", tok1, -1)
		c.next()
		c.next()
		c.send(map[string]string{"type": "say", "id": "hi", "text": "brb, coffee"})
		ch := c.event("chat")
		if f := c.until("answer", func(f frame) bool { return f.ID == "hi" }); f.Type != "ack" {
			t.Fatalf("say: %+v", f)
		}
		if d := dataOf(ch); d["text"] != "brb, coffee" || d["name"] != "Ann" {
			t.Errorf("chat %v", d)
		}
	})
}
