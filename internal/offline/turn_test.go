package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// The narrator reads the turn's context from the runner in-process and
// from the turn message's <context> block when only the chat messages
// reach it (as through the HTTP fake). Both must be the same turn: the
// same game played each way gives the same messages, outputs and state,
// and the in-process context still says, byte for byte, what the message
// says at every call of a turn (the tools change the state between calls;
// the context must not change with it).
func TestNarratorReadsTheSameTurnEitherWay(t *testing.T) {
	inProcess, fromMessages := newGame(t), newGame(t)
	checked := &contextChecker{t: t}
	inProcess.r = &agent.Runner{Narrative: checked, Combat: checked}
	inProcess.play(agent.TurnPlayer, inProcess.st.Party[0], "I look around the square")
	fromMessages.r = &agent.Runner{Narrative: messagesOnly{}, Combat: messagesOnly{}}
	fromMessages.play(agent.TurnPlayer, fromMessages.st.Party[0], "I look around the square")
	both := func(kind string, seat int, text string) {
		t.Helper()
		var actor func(g *game) *engine.Character
		if seat >= 0 {
			actor = func(g *game) *engine.Character { return g.st.Party[seat] }
		} else {
			actor = func(*game) *engine.Character { return nil }
		}
		a := inProcess.play(kind, actor(inProcess), text)
		b := fromMessages.play(kind, actor(fromMessages), text)
		if got, want := mustJSON(t, a.Messages)+mustJSON(t, a.Output), mustJSON(t, b.Messages)+mustJSON(t, b.Output); got != want {
			t.Fatalf("turn %d (%s %q) differs:\nin process:    %s\nfrom messages: %s", inProcess.turn, kind, text, got, want)
		}
	}
	for _, text := range []string{"I pick up the coil of rope", "We head into the Crooked Lantern inn",
		"I ask Maren about the goblins and the lantern", "back to the square", "go to the old mill", "I attack Snikket!"} {
		both(agent.TurnPlayer, 0, text)
	}
	for i := 0; inProcess.st.Game.Mode == engine.ModeCombat; i++ {
		if i > 200 {
			t.Fatal("fight did not end in 200 turns")
		}
		cb := inProcess.st.Game.Combat
		switch cur := cb.Current(); {
		case cb.Ending != "":
			both(agent.TurnResolution, -1, "")
		case cur.Kind == engine.KindBookend:
			both(agent.TurnBookend, -1, "")
		case cur.Kind == engine.KindNPC:
			both(agent.TurnNPC, -1, "")
		default:
			seat := indexOf(inProcess.st, cur.Ref)
			text := "I strike at the nearest goblin"
			if cb.Round%2 == 0 {
				text = "I raise my guard and defend"
			}
			both(agent.TurnPlayer, seat, text)
		}
	}
	both(agent.TurnPlayer, 1, "I look around")
	both(agent.TurnPlayer, 1, "I take everything")
	if got, want := mustJSON(t, inProcess.st), mustJSON(t, fromMessages.st); got != want {
		t.Errorf("the states differ after the game")
	}
	if checked.calls <= inProcess.turn {
		t.Errorf("%d model calls checked in %d turns; want tool calls between some", checked.calls, inProcess.turn)
	}
}

func indexOf(st *engine.State, characterID string) int {
	for i, c := range st.Party {
		if c.ID == characterID {
			return i
		}
	}
	return -1
}

// contextChecker is the narrator, checking at every call that the context
// the runner hands in still marshals to the turn message's <context> block.
type contextChecker struct {
	offline.Narrator
	t     *testing.T
	calls int
}

func (c *contextChecker) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	c.calls++
	turnMsg := req.Messages[len(req.Messages)-1]
	for i := len(req.Messages) - 1; i >= 0 && !agent.IsTurnMessage(turnMsg.Content); i-- {
		turnMsg = req.Messages[i]
	}
	_, block, _ := strings.Cut(turnMsg.Content, "<context>\n")
	block, _, _ = strings.Cut(block, "\n</context>")
	b, err := json.Marshal(req.Turn)
	if req.Turn == nil || err != nil || string(b) != block {
		c.t.Errorf("call %d: the in-process context is not the message's:\n%s\n%s", c.calls, b, block)
	}
	return c.Narrator.Complete(ctx, req)
}

// messagesOnly is the narrator given only the chat messages.
type messagesOnly struct{ offline.Narrator }

func (m messagesOnly) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	req.Turn = nil
	return m.Narrator.Complete(ctx, req)
}
