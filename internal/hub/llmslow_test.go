package hub_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tavern/internal/hub"
	llmtest "tavern/internal/openai/openaitest"
)

// slowEnv is a table whose model is the fake server, told slow after
// 100 ms and given 1.5 s an attempt.
func slowEnv(t *testing.T) (*llmtest.Server, *wsClient, *wsClient) {
	fake := llmtest.New(t, nil)
	e := newLLMEnvWith(t, 9, fake, func(c *hub.Config) {
		c.SlowAfter, c.AttemptDeadline = 100*time.Millisecond, 1500*time.Millisecond
	})
	_, a, s := seatedTable(e, fake)
	fake.SetFallback(func(llmtest.Request) llmtest.Reply { return respond("Recovered.") })
	return fake, a, s
}

// A model slow to send its first token is told to the table before its
// answer comes, once.
func TestLLMSlowFirstTokenIsTold(t *testing.T) {
	fake, a, s := slowEnv(t)
	fake.Push(llmtest.Reply{Delay: 600 * time.Millisecond, ToolCalls: respond("At last, the DM speaks.").ToolCalls})
	a.act("a1", "I wait")
	for _, c := range []*wsClient{a, s} {
		slow := 0
		c.until("the narration", func(f frame) bool {
			if systemCode(hub.CodeSlow)(f) {
				slow++
				if !strings.Contains(string(f.Data), "slow") {
					t.Errorf("%s: slow notice %s", c.name, f.Data)
				}
			}
			return f.Type == "event" && f.Kind == "narration"
		})
		if slow != 1 {
			t.Errorf("%s: %d slow notices before the narration, want 1", c.name, slow)
		}
	}
}

// The narration an attempt streamed before it hung is withdrawn before the
// next attempt's: no client is left with it, or sees it twice.
func TestLLMHungAttemptIsWithdrawn(t *testing.T) {
	fake, a, s := slowEnv(t)
	hung := respond("The door creaks open and the cold air of the cellar")
	hung.ChunkSize, hung.StallAfter = 6, 6
	fake.Push(hung) // the attempt's deadline ends it
	a.act("a1", "I open the door")
	for _, c := range []*wsClient{a, s} {
		var deltas, withdrawn int
		var turn string
		c.until("the narration", func(f frame) bool {
			var d struct{ Turn, Text string }
			_ = json.Unmarshal(f.Raw, &d)
			switch f.Type {
			case "narration_delta":
				if withdrawn == 0 {
					deltas++
					turn = d.Turn
				}
			case "narration_withdrawn":
				withdrawn++
				if d.Turn != turn {
					t.Errorf("%s: withdrawn turn %q, want %q", c.name, d.Turn, turn)
				}
			}
			return f.Type == "event" && f.Kind == "narration"
		})
		if deltas == 0 || withdrawn != 1 {
			t.Errorf("%s: %d deltas then %d withdrawals, want the hung attempt's text withdrawn once", c.name, deltas, withdrawn)
		}
	}
}

// A model that hangs every time: the action is given up within its
// attempts' deadlines, with a message that says why.
func TestLLMHungModelIsGivenUp(t *testing.T) {
	fake, a, _ := slowEnv(t)
	fake.SetFallback(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Delay: time.Hour} })
	a.act("a1", "I wait")
	f := a.until("the DM giving up", func(f frame) bool {
		return systemCode(hub.CodeUnavailable)(f) && strings.Contains(string(f.Data), "gave up")
	})
	if !strings.Contains(string(f.Data), "in time") {
		t.Errorf("give-up message %s, want it to say the DM did not answer in time", f.Data)
	}
}
