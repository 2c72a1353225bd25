package agent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"tavern/internal/engine"
)

// A session start reads the backstory as data; without one the DM is asked
// for an arrival and told to invent no heirlooms or relatives, and no empty
// words block is sent.
func TestStartMessageWithAndWithoutBackstory(t *testing.T) {
	st, d := fightState(t, "")
	st.Game.Combat = nil
	aldric := st.Party[0]
	for _, tc := range []struct {
		backstory   string
		want, avoid []string
	}{
		{"I carry my father's old sword.", []string{"Read the backstory", "create_item_for_player", "<player_words>\nI carry my father's old sword.\n</player_words>"}, []string{"no backstory"}},
		{"  \n", []string{"no backstory", "arrival", "their class", "invent no heirlooms or relatives"}, []string{"<player_words>", "Read the backstory", "create_item_for_player"}},
	} {
		tn := &Turn{No: 1, Kind: TurnStart, State: st, Dice: d, Actor: aldric, Text: tc.backstory}
		turnCtx := tn.context()
		msg := tn.userMessage(&turnCtx)
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("backstory %q: the message lacks %q:\n%s", tc.backstory, w, msg)
			}
		}
		for _, w := range tc.avoid {
			if strings.Contains(msg, w) {
				t.Errorf("backstory %q: the message has %q:\n%s", tc.backstory, w, msg)
			}
		}
		ctx, words, err := ReadTurnMessage(msg)
		if err != nil || ctx.Kind != TurnStart || ctx.Actor == nil || ctx.Actor.Name != "Aldric" || words != strings.TrimSpace(tc.backstory) {
			t.Errorf("backstory %q: read back %+v, %q, %v", tc.backstory, ctx, words, err)
		}
	}
}

// The context lists the items of the location, of each party member and
// of the NPC whose turn it is, each sorted by id: what World.ItemsOwned
// gives for each (the context finds them all in one pass).
func TestContextListsEachOwnersItems(t *testing.T) {
	st, d := fightState(t, "")
	for i, o := range []struct{ kind, id string }{{engine.OwnerLocation, "mill"}, {engine.OwnerCharacter, "c2"},
		{engine.OwnerNPC, "snikket"}, {engine.OwnerCharacter, "c1"}, {engine.OwnerLocation, "mill"}, {engine.OwnerNPC, "snikket"}} {
		id := fmt.Sprintf("z-item-%d", 9-i)
		if _, _, err := st.CreateItem(id, "rope", "Rope "+id, o.kind, o.id, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	tn := &Turn{Kind: TurnNPC, State: st, Dice: d}
	tn.Entry, _ = st.Game.Combat.Entry("dm:snikket")
	ctx := tn.context()
	refs := func(kind, id string) []ItemRef {
		out := []ItemRef{}
		for _, it := range st.World.ItemsOwned(kind, id) {
			out = append(out, ItemRef{ID: it.ID, Name: it.Name})
		}
		return out
	}
	check := func(who string, got, want []ItemRef) {
		t.Helper()
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Errorf("items of %s: %+v, want %+v", who, got, want)
		}
	}
	check("the mill", ctx.Location.Items, refs(engine.OwnerLocation, "mill"))
	for i, pc := range st.Party {
		check(pc.ID, ctx.Party[i].Items, refs(engine.OwnerCharacter, pc.ID))
	}
	check("snikket", ctx.NPC.Items, refs(engine.OwnerNPC, "snikket"))
}

// Each kind of turn message starts with its line, then the context.
func TestTurnMessageHeadLines(t *testing.T) {
	st, d := fightState(t, "")
	if _, _, err := st.StartCombat(d, []string{"snikket"}); err != nil {
		t.Fatal(err)
	}
	st.Game.Combat.Ending = engine.OutcomePlayerWin
	aldric := st.Party[0]
	snikket, _ := st.Game.Combat.Entry("dm:snikket")
	round := st.Game.Combat.Round
	for _, tc := range []struct {
		turn Turn
		want string
	}{
		{Turn{No: 7, Kind: TurnPlayer, Actor: aldric, Text: "I wait"}, "Turn 7. Aldric (seat 1) acts.\n"},
		{Turn{No: 8, Kind: TurnNPC, Entry: snikket}, fmt.Sprintf("Turn 8. NPC turn: play %s now, by its profile and tactics.\n", snikket.Name)},
		{Turn{No: 9, Kind: TurnBookend}, fmt.Sprintf("Turn 9. Round %d begins: recap the last round and set the scene.\n", round)},
		{Turn{No: 10, Kind: TurnResolution}, "Turn 10. The fight is over (" + string(engine.OutcomePlayerWin) + "): narrate how it ends and call end_combat.\n"},
		{Turn{No: 11, Kind: TurnStart, Actor: aldric, Text: "A smith's son."}, "Turn 11. Session start for Aldric (seat 1). Read the backstory below."},
		{Turn{No: 12, Kind: TurnStart, Actor: aldric}, "Turn 12. Session start for Aldric (seat 1), who has no backstory. Respond"},
		{Turn{No: 13, Kind: "other"}, contextOpen},
	} {
		tn := tc.turn
		tn.State, tn.Dice = st, d
		turnCtx := tn.context()
		if msg := tn.userMessage(&turnCtx); !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s turn: the message starts %q, want %q", tn.Kind, msg[:min(len(msg), 120)], tc.want)
		}
	}
}
