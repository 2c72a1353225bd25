package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// fight drives a tactical fight from the players' sockets until it ends:
// each `turn` event must name the entry at its index in the initiative of
// `combat_started`; each round starts with the DM's bookend narration; a
// PC whose player is listed in act acts with words(entry); others are
// absent and must be resolved by the turn timer. It returns the outcome
// and counts.
type fightLog struct {
	outcome          engine.Outcome
	rounds, timeouts int
	npcTurns, pcActs int
}

func fight(t *testing.T, watcher *wsClient, act map[string]*wsClient, words func(entry string) string) fightLog {
	t.Helper()
	started := watcher.event("combat_started")
	var order []string
	prev := 1 << 30
	for i, e := range dataOf(started)["initiative"].([]any) {
		m := e.(map[string]any)
		order = append(order, m["id"].(string))
		if i == 0 {
			if m["kind"] != "bookend" {
				t.Fatalf("first entry %v, want the DM bookend", m)
			}
			continue
		}
		init := int(m["initiative"].(float64))
		if init > prev {
			t.Fatalf("initiative not sorted: %v", order)
		}
		prev = init
	}
	var log fightLog
	n := 0
	for {
		f := watcher.until("turn, timeout or end", func(f frame) bool {
			return f.Type == "event" && (f.Kind == "turn" || f.Kind == "combat_ended" ||
				(f.Kind == "system" && dataOf(f)["code"] == "turn_timeout"))
		})
		switch f.Kind {
		case "combat_ended":
			log.outcome = engine.Outcome(dataOf(f)["outcome"].(string))
			return log
		case "system":
			log.timeouts++
			continue
		}
		d := dataOf(f)
		if d["resolution"] != nil {
			continue
		}
		entry, idx := entryOf(f), int(d["index"].(float64))
		if idx >= len(order) || order[idx] != entry {
			t.Fatalf("turn for %s at index %d, but the initiative there is %v", entry, idx, order)
		}
		switch {
		case entry == "dm":
			log.rounds++
			nar := watcher.until("bookend narration", func(n frame) bool { return n.Kind == "narration" && n.Seq > f.Seq })
			if dataOf(nar)["agent"] != "combat" {
				t.Fatalf("round %d: bookend narration from %v", log.rounds, dataOf(nar)["agent"])
			}
		case entry[:3] == "dm:":
			log.npcTurns++
		default:
			c, ok := act[entry]
			if !ok {
				if _, hasDeadline := d["deadline"]; !hasDeadline {
					t.Errorf("turn of absent %s without a deadline", entry)
				}
				continue // absent: the timer must resolve it
			}
			n++
			log.pcActs++
			// Ids must be unique per player for good: a repeated id is
			// (rightly) never applied twice.
			if r := c.act(fmt.Sprintf("%s-%d-%d", entry, f.Seq, n), words(entry)); r.Type != "ack" {
				t.Fatalf("%s: %+v", entry, r)
			}
		}
		if n > 300 {
			t.Fatal("fight does not end")
		}
	}
}

func TestThreePlayerFightWithTimerAndVictory(t *testing.T) {
	e := newEnv(t, 11)
	timeout := 1
	tid := e.table(hub.TableSpec{TurnTimeoutS: &timeout})
	pa, ta := e.player("Ann")
	pb, tb := e.player("Bob")
	pc, _ := e.player("Cid") // sits, then never connects
	ca := e.sit(tid, pa, "Aldric", "warrior")
	cb := e.sit(tid, pb, "Brina", "cleric")
	cc := e.sit(tid, pc, "Cato", "rogue")
	a := e.dial(tid, "player", ta, -1)
	b := e.dial(tid, "player", tb, -1)
	a.act("m", "we go to the old mill")
	a.event("narration")
	a.act("k", "I attack Snikket")
	log := fight(t, a, map[string]*wsClient{"pc:" + ca.Seat: a, "pc:" + cb.Seat: b}, func(string) string { return "I strike at the nearest goblin" })
	if log.outcome != engine.OutcomePlayerWin {
		t.Fatalf("outcome %s", log.outcome)
	}
	if log.timeouts == 0 || log.rounds == 0 || log.npcTurns == 0 {
		t.Errorf("want timeouts, rounds and NPC turns: %+v", log)
	}
	snap, _ := e.hub.Snapshot(context.Background(), tid)
	if snap.Mode != engine.ModeNarrative || snap.LastCombat == nil || len(snap.Party) != 3 {
		t.Fatalf("after: %+v", snap)
	}
	for _, c := range snap.Party {
		if c.ID == cc.ID && c.XP == 0 && c.HP > 0 {
			t.Errorf("Cato stood through the fight and should share the XP")
		}
	}
	t.Logf("%+v", log)
	for _, f := range append(a.events, a.backlog...) {
		switch d := dataOf(f); f.Kind {
		case "narration":
			t.Logf("#%d narration: %v", f.Seq, d["text"])
		case "system":
			t.Logf("#%d system: %v", f.Seq, d["message"])
		case "turn":
			t.Logf("#%d turn: round %v, %s", f.Seq, d["round"], entryOf(f))
		case "action":
			t.Logf("#%d action: %v", f.Seq, d["text"])
		}
	}
}

func TestThreePlayerTPK(t *testing.T) {
	e := newEnv(t, 5)
	off := 0
	tid := e.table(hub.TableSpec{TurnTimeoutS: &off})
	acts := map[string]*wsClient{}
	var first *wsClient
	seats := map[string]string{} // token → seat
	var tokens []string
	for _, name := range []string{"Ann", "Bob", "Cid"} {
		p, tok := e.player(name)
		seats[tok] = e.sit(tid, p, name+"wen", "mage").Seat
		tokens = append(tokens, tok)
	}
	// Dialled once everyone has arrived: the next narration answers the
	// first act, not a later arrival.
	for _, tok := range tokens {
		ws := e.dial(tid, "player", tok, -1)
		acts["pc:"+seats[tok]] = ws
		if first == nil {
			first = ws
		}
	}
	first.act("m", "we go to the old mill")
	first.event("narration")
	first.act("k", "I attack Snikket")
	log := fight(t, first, acts, func(string) string { return "I defend myself" })
	if log.outcome != engine.OutcomePlayerDie {
		t.Fatalf("outcome %s, want a TPK (%+v)", log.outcome, log)
	}
	snap, _ := e.hub.Snapshot(context.Background(), tid)
	if snap.Mode != engine.ModeNarrative || snap.Location.ID != "square" {
		t.Fatalf("after a TPK: mode %s at %s", snap.Mode, snap.Location.ID)
	}
	for _, c := range snap.Party {
		if c.HP != 1 {
			t.Errorf("%s wakes with %d HP, want 1", c.Name, c.HP)
		}
	}
	// Back in the square, play goes on.
	if r := first.act("after", "I look around"); r.Type != "ack" {
		t.Fatalf("%+v", r)
	}
	t.Logf("%+v", log)
}

// TestNarrativeCombatMode: no initiative queue — either player may act at
// any time, no DM turns are scheduled, the foes answer within each action,
// and the fight still ends with a forced resolution.
func TestNarrativeCombatMode(t *testing.T) {
	e := newEnv(t, 11)
	tid := e.table(hub.TableSpec{CombatMode: engine.CombatNarrative})
	pa, ta := e.player("Ann")
	pb, tb := e.player("Bob")
	e.sit(tid, pa, "Aldric", "warrior")
	e.sit(tid, pb, "Brina", "cleric")
	a := e.dial(tid, "player", ta, -1)
	b := e.dial(tid, "player", tb, -1)
	a.act("m", "we go to the old mill")
	a.event("narration")
	a.act("k", "I attack Snikket")
	a.event("combat_started")
	var last int64
	for i := 0; ; i++ {
		if i > 200 {
			t.Fatal("narrative fight does not end")
		}
		who := a
		if i%2 == 1 {
			who = b
		}
		r := who.act(fmt.Sprintf("n%d", i), "I attack the nearest goblin")
		if r.Type == "error" && r.Code == "busy" {
			// The other player's action is being resolved: wait for it.
			f := a.until("narration", func(f frame) bool { return f.Kind == "narration" && f.Seq > last || f.Kind == "combat_ended" })
			if f.Kind == "combat_ended" {
				return
			}
			last = f.Seq
			continue
		}
		if r.Type != "ack" {
			if r.Code == "dead" {
				continue // the other player acts next
			}
			t.Fatalf("act %d: %+v", i, r)
		}
		f := a.until("narration or end", func(f frame) bool {
			return f.Type == "event" && ((f.Kind == "narration" && f.Seq > last) || f.Kind == "combat_ended" || f.Kind == "turn")
		})
		last = f.Seq
		if f.Kind == "turn" && dataOf(f)["resolution"] == nil {
			t.Fatalf("a turn event in narrative combat: %s", f.Data)
		}
		if f.Kind == "combat_ended" {
			if o := dataOf(f)["outcome"]; o != string(engine.OutcomePlayerWin) && o != string(engine.OutcomePlayerDie) {
				t.Fatalf("outcome %v", o)
			}
			return
		}
		if f.Kind == "narration" && dataOf(f)["agent"] == "combat" && i == 0 && !strings.Contains(string(f.Data), "Aldric") {
			t.Errorf("first beat narration %s", f.Data)
		}
		if snap, _ := e.hub.Snapshot(context.Background(), tid); snap.Mode == engine.ModeNarrative {
			return // ended between reads
		}
	}
}

// TestSitterMidFightActsOnTurn: a player who sits down during a fight
// joins its initiative, and their session start waits for the fight to
// end; it does not take their queue slot, so on their turn they act
// (it was refused busy until the turn lapsed).
func TestSitterMidFightActsOnTurn(t *testing.T) {
	e := newEnv(t, 7)
	tid := e.table(hub.TableSpec{})
	p1, tok1 := e.player("Ann")
	c1 := e.sit(tid, p1, "Aldric", "warrior")
	a := e.dial(tid, "player", tok1, -1)
	a.startFight()

	p2, tok2 := e.player("Bea")
	c2, err := e.hub.Sit(context.Background(), tid, *p2, engine.NewCharacterSpec{Name: "Brena", Class: "rogue"})
	if err != nil {
		t.Fatal(err)
	}
	b := e.dial(tid, "player", tok2, -1)
	for i := range 20 {
		f := a.until("a PC's turn", func(f frame) bool {
			return f.Kind == "turn" && (entryOf(f) == "pc:"+c1.Seat || entryOf(f) == "pc:"+c2.Seat)
		})
		if entryOf(f) == "pc:"+c1.Seat {
			a.act(fmt.Sprintf("a%d", i), "I hit Snikket")
			continue
		}
		if f := b.act("b1", "I stab Snikket"); f.Type != "ack" {
			t.Fatalf("Brena's turn: %+v", f)
		}
		return
	}
	t.Fatal("Brena never had a turn")
}
