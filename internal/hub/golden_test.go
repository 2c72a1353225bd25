package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"tavern/internal/golden"
	"tavern/internal/hub"
)

// TestOfflineGameTranscript plays a seeded game with the offline narrator
// (explore, talk, travel, a whole fight in initiative order, the way home)
// and compares every stored event with testdata/offline_game.golden, so a
// change in what players read shows up in review as a diff. Rewrite the
// file with `go test ./internal/hub -run TestOfflineGameTranscript -update`.
func TestOfflineGameTranscript(t *testing.T) {
	e := newEnv(t, 11)
	tid := e.table(hub.TableSpec{Name: "Golden"})
	p, tok := e.player("Ann")
	me := e.sit(tid, p, "Aldric", "warrior")
	c := e.dial(tid, "player", tok, -1)

	play := func(n int, text string) frame {
		t.Helper()
		id := fmt.Sprintf("g%d", n)
		if f := c.act(id, text); f.Type != "ack" {
			t.Fatalf("%s %q: %+v", id, text, f)
		}
		mine := c.until("own action "+id, func(f frame) bool {
			return f.Type == "event" && f.Kind == "action" && dataOf(f)["text"] == text
		})
		actionID := dataOf(mine)["action_id"]
		return c.until("narration of "+id, func(f frame) bool {
			return f.Type == "event" && f.Kind == "narration" && dataOf(f)["action_id"] == actionID
		})
	}
	n := 0
	for _, text := range []string{"I look around the square", "I ask Maren about the lantern", "Let's go to the old mill"} {
		n++
		play(n, text)
	}
	// The fight: act on each of our turns until it ends.
	n++
	play(n, "I attack Snikket with my sword")
	for ended := false; !ended && n < 60; {
		f := c.until("our turn or the end", func(f frame) bool {
			return f.Type == "event" && (f.Kind == "combat_ended" || (f.Kind == "turn" && entryOf(f) == "pc:"+me.Seat))
		})
		if f.Kind == "combat_ended" {
			ended = true
			break
		}
		n++
		play(n, "I attack the nearest goblin")
	}
	n++
	play(n, "We walk back to the village square")

	evs, err := e.store.Events(context.Background(), tid, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, ev := range evs {
		// Keys sorted at every depth, as the file was first written from
		// the store's JSON: the file pins what players read, not key order.
		var fields any
		raw, _ := json.Marshal(ev.Data)
		_ = json.Unmarshal(raw, &fields)
		data, _ := json.Marshal(fields)
		fmt.Fprintf(&b, "#%d %s %s %s\n", ev.Seq, ev.Turn, ev.Kind, data)
	}
	golden.Compare(t, filepath.Join("testdata", "offline_game.golden"), []byte(golden.Stable(b.String())))
}
