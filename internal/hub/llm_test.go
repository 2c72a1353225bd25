package hub_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/openai"
	llmtest "tavern/internal/openai/openaitest"
	"tavern/internal/store"
)

// newLLMEnv is newEnv with the real openai-go adapter talking to a fake
// Chat Completions server, and the memory tools on.
func newLLMEnv(t *testing.T, seed uint64, fake *llmtest.Server) *env {
	t.Helper()
	return newLLMEnvWith(t, seed, fake, nil)
}

// newLLMEnvWith is newLLMEnv with tune's changes to the hub's config.
func newLLMEnvWith(t *testing.T, seed uint64, fake *llmtest.Server, tune func(*hub.Config)) *env {
	t.Helper()
	model := openai.New(openai.Config{
		APIKey: "sk-test", BaseURL: fake.URL, Model: "fake-gm",
		// Long enough that a loaded machine under -race does not time out
		// the replies that are meant to arrive (the arrival turn failed so
		// at load 12); the timeout case waits it once.
		CallTimeout: 2 * time.Second, MaxAttempts: 2,
		Backoff: func(int) time.Duration { return time.Millisecond },
	})
	e := &env{t: t, dbPath: filepath.Join(t.TempDir(), "tavern.db"), players: map[string]*engine.Player{}, model: model, seed: seed}
	// The calls go to the store directly, not through the Tavern's call
	// writer, so a test reads them as soon as the turn is played.
	logged := &agent.Logged{Model: model, Prices: agent.Prices{"fake-gm": {Input: 1, Cached: 0.5, Output: 2}}}
	runner := &agent.Runner{Narrative: logged, Combat: logged}
	tv := openTavern(t, e.dbPath, runner, func(c *hub.Config) {
		st := c.Store.(*db.DB)
		logged.Log, runner.Memory, runner.Log = st, st, c.Log
		c.DM, c.Seed, c.ShutdownGrace = model.Name(), func() uint64 { return seed }, 2*time.Second
		if tune != nil {
			tune(c)
		}
	})
	e.tv, e.store, e.hub = tv, tv.Store, tv.Hub
	mux := http.NewServeMux()
	mux.HandleFunc("/ws/tables/{id}", func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		p := e.players[r.URL.Query().Get("token")]
		h := e.hub // the hub of now: a test may restart it (e.open)
		e.mu.Unlock()
		h.ServeWS(w, r, r.PathValue("id"), p)
	})
	e.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.shutdown()
		e.srv.Close()
	})
	return e
}

// arrival is the fake model's narration of Aldric's session start.
const arrival = "Aldric the warrior arrives in Greyhollow Square."

func respond(narration string) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("respond", map[string]any{"narration": narration})}}
}

// history returns an agent's stored history, decoded, with turns.
func (e *env) history(tableID, agentName string) []agent.Message {
	e.t.Helper()
	rows, err := e.store.AllHistory(context.Background(), tableID, agentName)
	if err != nil {
		e.t.Fatal(err)
	}
	var out []agent.Message
	for _, r := range rows {
		var m agent.Message
		if err := json.Unmarshal(r.Body, &m); err != nil {
			e.t.Fatal(err)
		}
		m.Turn = r.Turn
		out = append(out, m)
	}
	return out
}

func (e *env) stateJSON(tableID string) string {
	e.t.Helper()
	td, err := e.store.LoadTable(context.Background(), tableID)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(td.State)
	return string(b)
}

// seatedTable makes a table with one seated player, arrived (the fake
// model narrates its session start), and returns its id, the player's
// socket (past welcome and snapshot) and a spectator's.
func seatedTable(e *env, fake *llmtest.Server) (string, *wsClient, *wsClient) {
	tid := e.table(hub.TableSpec{})
	p, tok := e.player("Ann")
	fake.Push(respond(arrival))
	e.sit(tid, p, "Aldric", "warrior")
	a := e.dial(tid, "player", tok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	s := e.dial(tid, "spectator", "", -1)
	s.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	return tid, a, s
}

func TestLLMNarrativeToolRoundsThenCombatThenEnd(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 11, fake)
	tid, a, _ := seatedTable(e, fake)
	// The arrival's call and history come first; this test's turns after.
	base, arrived := len(fake.Requests()), len(e.history(tid, engine.AgentNarrative))

	fake.Push(
		llmtest.Reply{Content: "Let me look.", ToolCalls: []agent.ToolCall{llmtest.Call("look", map[string]any{})}},
		llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("move_party", map[string]any{"to": "mill"})}},
		llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("start_combat", map[string]any{
			"narration": "Snikket shrieks and the goblins charge!", "foes": []string{"snikket", "goblin-archer", "goblin-brute"}})}},
	)
	// Every combat turn after that (the DM's round bookend first) ends the
	// fight: the goblins scatter.
	fake.SetFallback(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []agent.ToolCall{llmtest.Call("end_combat", map[string]any{
			"narration": "The goblins scatter into the reeds.", "outcome": engine.OutcomeNPCFlee})}}
	})
	if f := a.act("a1", "We go down to the mill and attack the goblins"); f.Type != "ack" {
		t.Fatalf("act: %+v", f)
	}
	n := a.event("narration")
	if got := dataOf(n)["text"]; got != "Snikket shrieks and the goblins charge!" {
		t.Fatalf("narration %v", got)
	}
	started := a.event("combat_started")
	if init := dataOf(started)["initiative"].([]any); len(init) != 5 {
		t.Fatalf("initiative %v", init)
	}
	ended := a.event("combat_ended")
	if out := dataOf(ended)["outcome"]; out != string(engine.OutcomeNPCFlee) {
		t.Fatalf("outcome %v", out)
	}
	a.until("mode narrative", func(f frame) bool {
		return f.Type == "event" && f.Kind == "mode" && dataOf(f)["mode"] == engine.ModeNarrative
	})

	all := fake.Requests()
	reqs := all[base:]
	if len(reqs) < 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	t.Logf("request 2 as the fake server saw it:\n%s\nits response:\n%s", reqs[1].Body, reqs[1].Response)
	// The narrative turn: three calls, each seeing the results before it.
	if got := reqs[1].Messages[len(reqs[1].Messages)-1]; got.Role != "tool" || !strings.Contains(got.Content, "Greyhollow Square") {
		t.Errorf("second call ends with %+v", got)
	}
	if got := reqs[2].Messages[len(reqs[2].Messages)-1]; got.Role != "tool" || !strings.Contains(got.Content, `"moved":true`) {
		t.Errorf("third call ends with %+v", got)
	}
	for i, r := range reqs[:3] {
		if r.Prefix() != reqs[0].Prefix() {
			t.Errorf("request %d: the system prompt or tool schemas changed", i+1)
		}
		names := strings.Join(r.ToolNames(), ",")
		if !strings.Contains(names, "start_combat") || !strings.Contains(names, "search_memories") || !strings.Contains(names, "recall_session_details") {
			t.Errorf("narrative tools %s", names)
		}
	}
	combatReq := reqs[3]
	if names := strings.Join(combatReq.ToolNames(), ","); !strings.Contains(names, "end_combat") || strings.Contains(names, "start_combat") {
		t.Errorf("combat tools %s", names)
	}
	if !strings.Contains(combatReq.Messages[len(combatReq.Messages)-1].Content, `"combat":{`) {
		t.Errorf("the combat state is not in the combat turn's user message")
	}

	// Persistence (seed 000 section 11): each agent's history, valid.
	narr := e.history(tid, engine.AgentNarrative)
	if len(narr) != arrived+7 {
		t.Fatalf("narrative history has %d messages, want %d+7", len(narr), arrived)
	}
	if ok, why := agent.Valid(narr); !ok {
		t.Errorf("narrative history: %s", why)
	}
	narr = narr[arrived:]
	if narr[1].Content != "Let me look." || narr[5].ToolCalls[0].Function.Name != "start_combat" {
		t.Errorf("narrative history %+v", narr)
	}
	comb := e.history(tid, engine.AgentCombat)
	if len(comb) < 3 || comb[len(comb)-2].ToolCalls[0].Function.Name != "end_combat" {
		t.Fatalf("combat history %+v", comb)
	}
	if ok, why := agent.Valid(comb); !ok {
		t.Errorf("combat history: %s", why)
	}

	// The narrative agent sees how the fight ended on its next turn.
	fake.Push(respond("The mill is quiet now."))
	a.act("a2", "I search the mill")
	a.until("narration", func(f frame) bool {
		return f.Type == "event" && f.Kind == "narration" && dataOf(f)["text"] == "The mill is quiet now."
	})
	reqs = fake.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.Messages[len(last.Messages)-1].Content, "last_combat_result") {
		t.Errorf("last_combat_result missing from %s", last.Messages[len(last.Messages)-1].Content)
	}

	// Every call is in the call log with its tokens and cost.
	calls, err := e.store.Calls(context.Background(), tid, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(reqs) {
		t.Errorf("%d calls logged, %d made", len(calls), len(reqs))
	}
	for _, c := range calls {
		if c.Model != "fake-gm" || c.PromptTokens == 0 || c.CompletionTokens == 0 || c.CostUSD <= 0 || c.Error != "" {
			t.Errorf("call %+v", c)
		}
	}
}

func TestLLMStreamingReachesEveryClientFirst(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 3, fake)
	tid, a, s := seatedTable(e, fake)
	_ = tid
	text := "Rain hisses on the slate roofs of Greyhollow; somewhere a shutter bangs, and the well exhales cold air."
	reply := respond(text)
	reply.ChunkSize = 40
	// Deltas that gather while the table is busy go out as one frame: a
	// model writing at its own pace is seen in pieces.
	reply.ChunkDelay = 10 * time.Millisecond
	fake.Push(reply)
	a.act("a1", "I listen")
	for _, c := range []*wsClient{a, s} {
		var deltas []string
		c.until("narration", func(f frame) bool {
			if f.Type == "narration_delta" {
				var d struct {
					Turn string `json:"turn"`
					Text string `json:"text"`
				}
				_ = json.Unmarshal(f.Raw, &d)
				if d.Turn == "" {
					t.Errorf("%s: delta without turn", c.name)
				}
				deltas = append(deltas, d.Text)
			}
			return f.Type == "event" && f.Kind == "narration"
		})
		if len(deltas) < 2 {
			t.Errorf("%s: %d deltas before the narration event, want the narration streamed", c.name, len(deltas))
		}
		if got := strings.Join(deltas, ""); got != text {
			t.Errorf("%s: deltas %q, want %q", c.name, got, text)
		}
	}
}

func TestLLMFaults(t *testing.T) {
	cases := []struct {
		name string
		// replies are answered in order; the turn must then end with
		// respond("Recovered.") answered by the fallback.
		replies []llmtest.Reply
		// failFirst: the first attempt of the turn must fail as a whole
		// (system event, nothing committed) before the table recovers.
		failFirst bool
		// inHistory is a piece of text that the committed history must
		// hold (the error the model was told), if any.
		inHistory string
	}{
		{name: "timeout then success", replies: []llmtest.Reply{{Delay: time.Minute}}},
		{name: "429 then success", replies: []llmtest.Reply{{Status: 429, RetryAfter: "0"}}},
		{name: "500 forever", replies: []llmtest.Reply{{Status: 500}, {Status: 500}}, failFirst: true},
		{name: "malformed tool JSON", replies: []llmtest.Reply{{ToolCalls: []agent.ToolCall{llmtest.Call("look", `{"oops`)}}}, inHistory: "not a JSON object"},
		{name: "unknown tool", replies: []llmtest.Reply{{ToolCalls: []agent.ToolCall{llmtest.Call("cast_fireball", `{}`)}}}, inHistory: "Unknown tool"},
		{name: "output missing", replies: []llmtest.Reply{{Content: "The rain falls."}}, inHistory: "You must end the turn"},
		{name: "empty answer", replies: []llmtest.Reply{{}}, inHistory: "You must end the turn"},
		{name: "output with invalid fields", replies: []llmtest.Reply{{ToolCalls: []agent.ToolCall{llmtest.Call("respond", `{"hints":["x"]}`)}}}, inHistory: "respond needs narration"},
		{name: "start_combat with unknown foes", replies: []llmtest.Reply{{ToolCalls: []agent.ToolCall{llmtest.Call("start_combat", map[string]any{"narration": "Fight!", "foes": []string{"dragon"}})}}}, inHistory: "Error:"},
		{name: "invalid four times", replies: []llmtest.Reply{
			{ToolCalls: []agent.ToolCall{llmtest.Call("look", `{"oops`)}},
			{ToolCalls: []agent.ToolCall{llmtest.Call("nope", `{}`)}},
			{Content: "hmm"},
			{ToolCalls: []agent.ToolCall{llmtest.Call("respond", `{}`)}},
		}, failFirst: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := llmtest.New(t, nil)
			e := newLLMEnv(t, 5, fake)
			tid, a, _ := seatedTable(e, fake)
			arrived := len(e.history(tid, engine.AgentNarrative))
			before := e.stateJSON(tid)
			evsBefore, _ := e.store.Events(context.Background(), tid, 0, 1000)
			fake.Push(c.replies...)
			broken := func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Status: 500} }
			ok := func(llmtest.Request) llmtest.Reply { return respond("Recovered.") }
			if c.failFirst {
				fake.SetFallback(broken)
			} else {
				fake.SetFallback(ok)
			}
			if f := a.act("a1", "I wait"); f.Type != "ack" {
				t.Fatalf("act: %+v", f)
			}
			if c.failFirst {
				sys := a.event("system")
				if dataOf(sys)["code"] != "unavailable" {
					t.Fatalf("system event %s", sys.Data)
				}
				// Nothing of the failed turn is committed: no narration,
				// the same state, an empty history, the action pending.
				for _, f := range a.backlog {
					if f.Type == "event" && f.Kind == "narration" {
						t.Fatalf("narration committed by a failed turn: %s", f.Data)
					}
				}
				if got := e.stateJSON(tid); got != before {
					t.Errorf("state changed by a failed turn")
				}
				if h := e.history(tid, engine.AgentNarrative); len(h) != arrived {
					t.Errorf("failed turn left %d history messages", len(h)-arrived)
				}
				td, err := e.store.LoadTable(context.Background(), tid)
				if err != nil || len(td.Pending) != 1 {
					t.Fatalf("pending %+v %v", td.Pending, err)
				}
				evs, _ := e.store.Events(context.Background(), tid, evsBefore[len(evsBefore)-1].Seq, 1000)
				for _, ev := range evs {
					if ev.Kind == "narration" || ev.Kind == "dice" {
						t.Errorf("failed turn committed a %s event", ev.Kind)
					}
				}
				if c.name == "500 forever" {
					calls, err := e.store.Calls(context.Background(), tid, 10)
					if err != nil || len(calls) == 0 || !strings.Contains(calls[0].Error, "500") {
						t.Errorf("the failed call is not in the call log: %+v %v", calls, err)
					}
				}
				fake.SetFallback(ok) // the server recovers; the hub retries
			}
			n := a.event("narration")
			if got := dataOf(n)["text"]; got != "Recovered." {
				t.Fatalf("narration %v", got)
			}
			h := e.history(tid, engine.AgentNarrative)
			if ok, why := agent.Valid(h); !ok {
				t.Errorf("history: %s", why)
			}
			var all strings.Builder
			for _, m := range h {
				all.WriteString(m.Content)
			}
			if c.inHistory != "" && !strings.Contains(all.String(), c.inHistory) {
				t.Errorf("history lacks %q:\n%s", c.inHistory, all.String())
			}
			td, err := e.store.LoadTable(context.Background(), tid)
			if err != nil || len(td.Pending) != 0 {
				t.Fatalf("pending after recovery %+v %v", td.Pending, err)
			}
		})
	}
}

// TestLLMHistoryWithOrphansLoadsCleanly stores seed 004's broken history
// (an orphaned result first, an orphan inside a turn, a call left without
// its result by a crash) and plays a turn on it: the context the model
// gets is valid, and the turn goes through.
func TestLLMHistoryWithOrphansLoadsCleanly(t *testing.T) {
	fake := llmtest.New(t, nil)
	e := newLLMEnv(t, 9, fake)
	tid, _, _ := seatedTable(e, fake)
	base := len(fake.Requests())
	raw, err := os.ReadFile("testdata/seed004_history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []store.AgentMessage
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var l struct {
			Turn    int             `json:"turn"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, store.AgentMessage{Agent: engine.AgentNarrative, Turn: l.Turn, Body: l.Message})
	}
	if err := e.store.Commit(context.Background(), store.Commit{TableID: tid, Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	// A table reads its history from the store when it loads (then keeps
	// it in memory): restart, as a server would, so it loads this one.
	e.shutdown()
	e.open()
	_, tok := e.player("Ann")
	a := e.dial(tid, "player", tok, -1)
	a.until("snapshot", func(f frame) bool { return f.Type == "snapshot" })
	fake.Push(respond("The square is quiet."))
	a.act("a1", "I wait again")
	if n := a.event("narration"); dataOf(n)["text"] != "The square is quiet." {
		t.Fatalf("narration %s", n.Data)
	}
	r := fake.Requests()[base]
	if ok, why := agent.Valid(r.Messages); !ok {
		t.Fatalf("context sent: %s\n%+v", why, r.Messages)
	}
	var ids []string
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			ids = append(ids, c.ID)
		}
		if m.Role == "tool" {
			ids = append(ids, "result:"+m.ToolCallID)
		}
	}
	// The arrival's respond call (the fake's first) comes first, whole.
	if got := strings.Join(ids, ","); got != "call_1_0,result:call_1_0,call_DEF,result:call_DEF,call_R2,result:call_R2" {
		t.Errorf("calls and results sent: %s", got)
	}
}
