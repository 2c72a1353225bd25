package hub_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"tavern/internal/agent"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/offline"
	"tavern/internal/openai"
	llmtest "tavern/internal/openai/openaitest"
	"tavern/internal/store"
)

var turnNoRE = regexp.MustCompile(`^Turn (\d+)\.`)

// turnOf returns the turn number of a request: that of its last turn
// message.
func turnOf(r llmtest.Request) int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "user" && strings.Contains(m.Content, "<context>") {
			if g := turnNoRE.FindStringSubmatch(m.Content); g != nil {
				n, _ := strconv.Atoi(g[1])
				return n
			}
		}
	}
	return 0
}

// playTurns plays turns narrative turns through the whole stack — a
// websocket client, the hub, SQLite, the openai-go adapter and the fake
// server, where the offline narrator answers over the wire — and returns
// the fake's requests and the store. It is the benchmark's harness, usable
// from tests too. It returns the requests, the memories archived and those
// archived before the last turn (a turn's archive is committed with it, so
// the next turn is the first to see it).
func playTurns(tb testing.TB, turns int) (reqs []llmtest.Request, mems, beforeLast []store.Memory) {
	tb.Helper()
	ctx := context.Background()
	fake := llmtest.New(tb, llmtest.FromModel(offline.Narrator{}))
	model := openai.New(openai.Config{APIKey: "sk-bench", BaseURL: fake.URL, Model: "fake-gm", CallTimeout: 10 * time.Second})
	runner := &agent.Runner{Narrative: model, Combat: model}
	tv := openTavern(tb, filepath.Join(tb.TempDir(), "tavern.db"), runner, func(c *hub.Config) {
		runner.Memory = c.Store.(*db.DB)
		c.DM, c.Seed = model.Name(), func() uint64 { return 42 }
	})
	store, h := tv.Store, tv.Hub
	owner := engine.Player{ID: "p-ann", Name: "Ann"}
	if err := store.CreatePlayer(ctx, owner, []byte("tok")); err != nil {
		tb.Fatal(err)
	}
	ts, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Bench"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := h.Sit(ctx, ts.ID, owner, engine.NewCharacterSpec{Name: "Aldric", Class: "warrior"}); err != nil {
		tb.Fatal(err)
	}
	awaitArrival(tb, h, ts.ID, owner) // turn 1; the played turns follow
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeWS(w, r, ts.ID, &owner)
	}))
	defer func() {
		srv.CloseClientConnections()
		tv.Close()
		srv.Close()
	}()
	var conn *websocket.Conn
	defer func() {
		if conn != nil {
			conn.CloseNow()
		}
	}()
	actions := []string{"I look around", "I go to the inn", "I talk to Maren", "I go back to the square", "I look at the well"}
	for i := range turns {
		// A fresh connection every 20 turns, as a long session's reconnects.
		if i%20 == 0 {
			if conn != nil {
				conn.Close(websocket.StatusNormalClosure, "")
			}
			conn, _, err = websocket.Dial(ctx, strings.Replace(srv.URL, "http", "ws", 1)+"/?role=player", &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}})
			if err != nil {
				tb.Fatal(err)
			}
			conn.SetReadLimit(1 << 22)
		}
		if i == turns-1 {
			if beforeLast, err = store.Memories(ctx, ts.ID, "", 0); err != nil {
				tb.Fatal(err)
			}
		}
		b, _ := json.Marshal(map[string]string{"type": "act", "id": fmt.Sprintf("a%d", i), "text": actions[i%len(actions)]})
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			tb.Fatal(err)
		}
		for {
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, data, err := conn.Read(rctx)
			cancel()
			if err != nil {
				tb.Fatalf("turn %d: %v", i+1, err)
			}
			var f frame
			_ = json.Unmarshal(data, &f)
			if f.Type == "error" && f.Code == hub.CodeRateLimited {
				// The frame rate limit is per player: back off and send
				// the same act again, as a well-behaved client does.
				time.Sleep(150 * time.Millisecond)
				if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
					tb.Fatal(err)
				}
				continue
			}
			if f.Type == "error" {
				tb.Fatalf("turn %d: %s", i+1, data)
			}
			if f.Type == "event" && (f.Kind == "narration" || f.Kind == "system") {
				if f.Kind == "system" {
					tb.Fatalf("turn %d failed: %s", i+1, f.Data)
				}
				break
			}
		}
	}
	if mems, err = store.Memories(ctx, ts.ID, "", 0); err != nil {
		tb.Fatal(err)
	}
	return fake.Requests(), mems, beforeLast
}

// BenchmarkTokenEconomy plays 500 narrative turns (see playTurns) and
// reports the prompt tokens of each turn's first call — its context — at
// turns 1, 10, 50, 100 and 500, the peak after turn 50, the cached tokens
// per call and the size of the stable prefix. It fails if the tokens grow
// once the window has filled (turn 500 > 1.2 x turn 50) or if the stable
// prefix (system prompt and tool schemas) ever changes.
func BenchmarkTokenEconomy(b *testing.B) {
	const turns = 500
	for range b.N {
		reqs, mems, _ := playTurns(b, turns)
		first := map[int]llmtest.Request{}
		base, calls, cached, prompt := 0, 0, 0, 0
		for _, r := range reqs {
			if r.Prefix() != reqs[0].Prefix() {
				b.Fatalf("request %d: the stable prefix changed", r.N)
			}
			n := turnOf(r)
			if n == 0 {
				b.Fatalf("request %d: no turn message", r.N)
			}
			if _, ok := first[n]; !ok {
				first[n] = r
			}
			if base == 0 || n < base {
				base = n
			}
			calls++
			prompt += r.Usage.PromptTokens
			cached += r.Usage.CachedTokens
		}
		at := func(k int) int { return first[base+k-1].Usage.PromptTokens }
		peak := 0
		for k := 50; k <= turns; k++ {
			peak = max(peak, at(k))
		}
		for _, k := range []int{1, 10, 50, 100, 500} {
			b.ReportMetric(float64(at(k)), fmt.Sprintf("prompt_tok@%d", k))
		}
		var curve strings.Builder
		for k := 25; k <= turns; k += 25 {
			fmt.Fprintf(&curve, " %d:%d/%d", k, at(k), first[base+k-1].Usage.CachedTokens)
		}
		b.Logf("turn:prompt/cached tokens of its first call:%s", curve.String())
		for _, k := range []int{50, 100, 500} {
			b.ReportMetric(float64(first[base+k-1].Usage.CachedTokens), fmt.Sprintf("cached_tok@%d", k))
		}
		b.ReportMetric(float64(peak), "peak_prompt_tok@50-500")
		b.ReportMetric(float64(prompt)/float64(calls), "prompt_tok/call")
		b.ReportMetric(float64(cached)/float64(calls), "cached_tok/call")
		b.ReportMetric(float64(len(reqs[0].Prefix())/4), "prefix_tok")
		b.ReportMetric(float64(calls)/turns, "calls/turn")
		b.ReportMetric(float64(len(mems)), "memories")
		if at(500) > at(50)*12/10 {
			b.Fatalf("prompt tokens grow: turn 50 %d, turn 500 %d, peak %d", at(50), at(500), peak)
		}
		if len(mems) < 10 {
			b.Fatalf("%d memories after %d turns", len(mems), turns)
		}
	}
}

// TestTokenEconomyShort is the benchmark's check at a smaller scale, run
// with every test: 60 turns, a stable prefix on every call, a valid
// context on every call (memories first, then a window that starts with a
// user message and never splits a call from its results), memories
// archived, and no growth of the context once the window has filled.
func TestTokenEconomyShort(t *testing.T) {
	const turns = 60
	reqs, mems, beforeLast := playTurns(t, turns)
	first := map[int]int{}
	base := 0
	for _, r := range reqs {
		if r.Prefix() != reqs[0].Prefix() {
			t.Fatalf("request %d: the stable prefix changed", r.N)
		}
		msgs := r.Messages
		if len(msgs) > 0 && msgs[0].Role == "system" {
			if !strings.HasPrefix(msgs[0].Content, "Memories of earlier play") {
				t.Fatalf("request %d: unexpected system message %q", r.N, msgs[0].Content)
			}
			msgs = msgs[1:]
		}
		if ok, why := agent.Valid(msgs); !ok {
			t.Fatalf("request %d: %s", r.N, why)
		}
		n := turnOf(r)
		if _, ok := first[n]; !ok {
			first[n] = r.Usage.PromptTokens
		}
		if base == 0 || n < base {
			base = n
		}
	}
	if len(mems) < 5 {
		t.Errorf("%d memories after %d turns", len(mems), turns)
	}
	// The last call sees the last three memories archived before its
	// turn, oldest first.
	last := reqs[len(reqs)-1].Messages[0]
	if last.Role != "system" || strings.Count(last.Content, "\n- Session ") != 3 {
		t.Errorf("memories in the last context: %q", last.Content)
	}
	for _, m := range beforeLast[len(beforeLast)-3:] {
		if !strings.Contains(last.Content, fmt.Sprintf("Session %d (turns %d-%d) %s", m.ID, m.FirstTurn, m.LastTurn, m.Title)) {
			t.Errorf("memory %d missing from the context", m.ID)
		}
	}
	t20, t60 := first[base+19], first[base+59]
	if t60 > t20*12/10 {
		t.Errorf("prompt tokens grow: turn 20 %d, turn 60 %d", t20, t60)
	}
}
