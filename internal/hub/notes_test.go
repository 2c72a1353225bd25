package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tavern/internal/engine"
	"tavern/internal/hub"
)

// The offline narrator honours a note that names something, and a note
// can never change a die, HP, gold or XP: the same fight on two tables of
// the same seed, one with notes that claim otherwise, rolls the same dice
// and leaves the party the same.
func TestNotesNameThingsButChangeNoNumbers(t *testing.T) {
	e := newEnv(t, 9)
	ctx := context.Background()
	owner, _ := e.player("Owner")
	play := func(notes ...string) (rolled []string, party string, look string) {
		id := e.table(hub.TableSpec{})
		for _, n := range notes {
			if _, err := e.hub.AddNote(ctx, id, *owner, n); err != nil {
				t.Fatal(err)
			}
		}
		p, tok := e.player("Ann")
		e.sit(id, p, "Aldric", "warrior")
		a := e.dial(id, "player", tok, -1)
		a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
		a.act("l", "look around")
		look, _ = dataOf(a.event("narration"))["text"].(string)
		from := lastSeq(t, e, id)
		a.act("m", "go to the old mill")
		a.event("narration")
		a.act("k", "attack Snikket")
		a.until("a player's turn", func(f frame) bool {
			return f.Type == "event" && f.Kind == "turn" && strings.HasPrefix(entryOf(f), "pc:")
		})
		waitIdle(e, id)
		s, err := e.hub.Snapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var sheet []string
		for _, c := range s.Party {
			b, _ := json.Marshal([]any{c.HP, c.MaxHP, c.Gold, c.XP, c.Level})
			sheet = append(sheet, string(b))
		}
		return dice(events(e, id, from)), strings.Join(sheet, ","), look
	}
	plainDice, plainParty, plainLook := play()
	dice, party, look := play("The Crooked Lantern inn is called The Drunken Goose.",
		"Aldric has 999 HP and 1000 gold.", "Every attack the party makes hits for 50 damage.")
	if !strings.Contains(plainLook, "The Crooked Lantern inn") || !strings.Contains(look, "The Drunken Goose") || strings.Contains(look, "Crooked Lantern inn") {
		t.Errorf("the narration does not honour the note's name:\nwithout: %s\nwith: %s", plainLook, look)
	}
	if len(plainDice) == 0 || strings.Join(dice, "\n") != strings.Join(plainDice, "\n") {
		t.Errorf("notes changed the dice:\n%s\nwithout notes:\n%s", strings.Join(dice, "\n"), strings.Join(plainDice, "\n"))
	}
	if party != plainParty {
		t.Errorf("notes changed the party: %s, without notes %s", party, plainParty)
	}
}

// Notes: who may add and remove them, their bounds, their events, and
// that they are kept across a restart.
func TestNotesRules(t *testing.T) {
	e := newEnv(t, 3)
	ctx := context.Background()
	id := e.table(hub.TableSpec{})
	owner, _ := e.player("Owner")
	ann, atok := e.player("Ann")
	bob, _ := e.player("Bob")
	e.sit(id, ann, "Aldric", "warrior")
	s := e.dial(id, "spectator", "", -1)
	s.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })

	if _, err := e.hub.AddNote(ctx, id, *bob, "I was here."); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("a stranger's note: %v, want forbidden", err)
	}
	for _, bad := range []string{"", "   ", strings.Repeat("a", 501), "bad\x00byte"} {
		if _, err := e.hub.AddNote(ctx, id, *ann, bad); engine.ErrorCode(err) != engine.EINVALID {
			t.Errorf("note %q: %v, want invalid", bad, err)
		}
	}
	n, err := e.hub.AddNote(ctx, id, *ann, "Maren owes Aldric a favour.")
	if err != nil {
		t.Fatal(err)
	}
	if ev := s.event("note"); dataOf(ev)["id"] != n.ID || dataOf(ev)["text"] != n.Text || dataOf(ev)["by"] != ann.ID {
		t.Errorf("note event %s", ev.Raw)
	}
	if err := e.hub.RemoveNote(ctx, id, *bob, n.ID); engine.ErrorCode(err) != engine.EFORBIDDEN {
		t.Errorf("a stranger removes a note: %v, want forbidden", err)
	}
	e.shutdown()
	e.open()
	notes, err := e.hub.Notes(ctx, id)
	if err != nil || len(notes) != 1 || notes[0].ID != n.ID || notes[0].ByName != "Ann" {
		t.Fatalf("notes after a restart: %+v %v", notes, err)
	}
	snap, _ := e.hub.Snapshot(ctx, id)
	if len(snap.Notes) != 1 {
		t.Errorf("snapshot notes %+v", snap.Notes)
	}
	a := e.dial(id, "player", atok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	if err := e.hub.RemoveNote(ctx, id, *owner, n.ID); err != nil {
		t.Fatal(err)
	}
	if ev := a.event("note_removed"); dataOf(ev)["id"] != n.ID || dataOf(ev)["by"] != owner.ID {
		t.Errorf("note_removed event %s", ev.Raw)
	}
	if err := e.hub.RemoveNote(ctx, id, *owner, n.ID); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("removing it again: %v, want not found", err)
	}
}

// The whisper frame: the owner's only, 1–1000 characters, durable once
// acked (it waits across a restart), read by the next DM turn.
func TestWhisperFrame(t *testing.T) {
	e := newEnv(t, 3)
	id := e.table(hub.TableSpec{})
	_, otok := e.player("Owner")
	ann, atok := e.player("Ann")
	e.sit(id, ann, "Aldric", "warrior")
	a := e.dial(id, "player", atok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	anon := e.dial(id, "spectator", "", -1)
	o := e.dial(id, "spectator", otok, -1)
	answer := func(c *wsClient, id, text string) frame {
		c.send(map[string]string{"type": "whisper", "id": id, "text": text})
		return c.until("answer to "+id, func(f frame) bool { return (f.Type == "ack" || f.Type == "error") && f.ID == id })
	}
	if f := answer(a, "w1", "make it rain"); f.Code != "forbidden" {
		t.Errorf("a player's whisper: %s", f.Raw)
	}
	if f := answer(anon, "w2", "make it rain"); f.Code != "forbidden" {
		t.Errorf("an anonymous spectator's whisper: %s", f.Raw)
	}
	for i, bad := range []string{"", strings.Repeat("x", 1001)} {
		if f := answer(o, "b"+string(rune('0'+i)), bad); f.Code != "bad_request" {
			t.Errorf("whisper of %d characters: %s", len(bad), f.Raw)
		}
	}
	const secret = "The miller is the thief."
	if f := answer(o, "w3", secret); f.Type != "ack" || f.Status != "accepted" {
		t.Fatalf("the owner's whisper: %s", f.Raw)
	}
	for i := 2; i <= 5; i++ {
		if f := answer(o, "more"+string(rune('0'+i)), "and more"); f.Type != "ack" {
			t.Fatalf("whisper %d: %s", i, f.Raw)
		}
	}
	if f := answer(o, "w6", "one too many"); f.Code != "conflict" {
		t.Errorf("a sixth waiting whisper: %s", f.Raw)
	}
	e.shutdown()
	e.open()
	a = e.dial(id, "player", atok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	a.act("l", "look around")
	a.event("narration")
	found := 0
	for _, m := range e.history(id, engine.AgentNarrative) {
		if strings.Contains(m.Content, secret) {
			found++
		}
	}
	if found != 1 {
		t.Errorf("the whisper is in %d history messages, want 1 (the next turn's)", found)
	}
	for _, c := range []*wsClient{a, anon} {
		drain(c)
		for _, f := range c.backlog {
			if strings.Contains(string(f.Raw), secret) {
				t.Errorf("%s got the whisper: %s", c.name, f.Raw)
			}
		}
	}
}
