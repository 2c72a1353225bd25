package agent

import (
	"strings"
	"testing"
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
