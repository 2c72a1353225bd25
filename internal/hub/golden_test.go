package hub_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"tavern/internal/hub"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

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
		data, _ := json.Marshal(ev.Data)
		fmt.Fprintf(&b, "#%d %s %s %s\n", ev.Seq, ev.Turn, ev.Kind, data)
	}
	compareGolden(t, filepath.Join("testdata", "offline_game.golden"), stableIDs(b.String()))
}

// randomID matches the random part of ids (ident.New: 16 hex digits) and
// turn deadlines, the two things a seeded game does not fix.
var (
	randomID = regexp.MustCompile(`\b([a-z]+)([-_])[0-9a-f]{16}\b`)
	deadline = regexp.MustCompile(`"deadline":"[^"]*"`)
)

// stableIDs renames random ids in order of first appearance (t-1, c-1, …)
// and blanks deadlines.
func stableIDs(s string) string {
	seen := map[string]string{}
	count := map[string]int{}
	s = randomID.ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := seen[id]; ok {
			return r
		}
		m := randomID.FindStringSubmatch(id)
		count[m[1]]++
		seen[id] = fmt.Sprintf("%s%s%d", m[1], m[2], count[m[1]])
		return seen[id]
	})
	return deadline.ReplaceAllString(s, `"deadline":"…"`)
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d (run with -update to accept):\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}
