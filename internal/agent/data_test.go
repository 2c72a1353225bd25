package agent_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
	"tavern/internal/db"
	"tavern/internal/engine"
	"tavern/internal/openai/openaitest"
	"tavern/internal/store"
)

// dataEnv is a seeded database with the data agent over it, its model the
// real OpenAI adapter talking to a fake server.
type dataEnv struct {
	path  string
	store *db.DB
	data  *dataset.Dataset
	fake  *openaitest.Server
	agent *agent.DataAgent
}

func newDataEnv(t *testing.T, fallback openaitest.Responder) *dataEnv {
	t.Helper()
	e := &dataEnv{path: datasettest.MustSeed(t)}
	e.open(t)
	e.fake = openaitest.New(t, fallback)
	e.agent = e.newAgent(t)
	return e
}

// open opens the store and the dataset on the seeded file (again after a
// "restart").
func (e *dataEnv) open(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	s, err := db.Open(ctx, e.path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(ctx, e.path)
	if err != nil {
		t.Fatal(err)
	}
	e.store, e.data = s, d
	t.Cleanup(func() {
		d.Close()
		s.Close()
	})
}

func (e *dataEnv) newAgent(t *testing.T) *agent.DataAgent {
	return &agent.DataAgent{
		Model:         &agent.Logged{Model: newFakeModel(t, e.fake), Log: e.store, Prices: agent.DefaultPrices},
		Data:          e.data,
		Conversations: e.store,
	}
}

// recorder keeps the progress events of a run.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) progress(event string, _ dataset.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
}

func reply(name string, args any) openaitest.Reply {
	return openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call(name, args)}}
}

const deathsSQL = "SELECT ruleset, sum(party_died) AS deaths, count(*) AS fights FROM v_combats GROUP BY ruleset ORDER BY ruleset"

func TestDataAgentQueryVisualizeAnswer(t *testing.T) {
	e := newDataEnv(t, nil)
	e.fake.Push(
		reply("query_data", map[string]any{"sql": deathsSQL, "description": "Deaths per ruleset"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "bar", "x": "ruleset", "y": []string{"deaths"}}, "title": "Party deaths per ruleset", "description": "Deaths by ruleset"}),
		reply("answer", map[string]any{"text": "Parties died twice, both in d20 fights."}),
	)
	var rec recorder
	reply, err := e.agent.Ask(context.Background(), "", "How often do parties die per ruleset?", rec.progress)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answer != "Parties died twice, both in d20 fights." || reply.Conversation == "" || reply.Offline {
		t.Errorf("reply %+v", reply)
	}
	if len(reply.Steps) != 2 {
		t.Fatalf("steps %+v, want a query and a chart", reply.Steps)
	}
	q, c := reply.Steps[0], reply.Steps[1]
	if q.SQL != deathsSQL || !slices.Equal(q.Columns, []string{"ruleset", "deaths", "fights"}) || len(q.Rows) != 2 || q.Error != "" {
		t.Errorf("query step %+v", q)
	}
	if got := fmt.Sprint(q.Rows); got != "[[d100 0 1] [d20 2 5]]" {
		t.Errorf("rows %s, want the seed's deaths per ruleset", got)
	}
	if c.Chart == nil || c.Chart.Title != "Party deaths per ruleset" || !strings.HasPrefix(c.SVG, "<svg") || c.Error != "" {
		t.Errorf("chart step %+v", c)
	}
	if reply.ChartSVG != c.SVG {
		t.Error("chart_svg is not the chart drawn")
	}
	if want := []string{"sql", "rows", "chart"}; !slices.Equal(rec.events, want) {
		t.Errorf("progress %v, want %v", rec.events, want)
	}

	reqs := e.fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	for _, want := range []string{"- **v_combats** (6 rows)", "  - party_died INTEGER: 1 if outcome is player_die", "- **v_llm_calls** (10 rows)"} {
		if !strings.Contains(reqs[0].System, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, reqs[0].System)
		}
	}
	if got := reqs[0].ToolNames(); !slices.Equal(got, []string{"query_data", "visualize", "answer"}) {
		t.Errorf("tools %v", got)
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != "tool" || !strings.Contains(last.Content, "Query executed successfully.\nResult: 2 rows x 3 columns") {
		t.Errorf("query result sent back %+v", last)
	}
	if last := reqs[2].Messages[len(reqs[2].Messages)-1]; !strings.Contains(last.Content, "Chart drawn") {
		t.Errorf("chart result sent back %+v", last)
	}

	calls, err := e.store.Calls(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	var data int
	for _, c := range calls {
		if c.Agent == agent.AgentData {
			data++
			if c.Model != "fake-gm" || c.PromptTokens == 0 {
				t.Errorf("logged call %+v", c)
			}
		}
	}
	if data != 3 {
		t.Errorf("%d calls logged under agent data, want 3", data)
	}
}

// lastTool returns the content of the last tool message, "" if none.
func lastTool(msgs []agent.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}

func TestDataAgentRecoversFromInvalidSQL(t *testing.T) {
	// Three invalid calls (a column that does not exist, a syntax error, a
	// chart before any query) and their errors back; the fourth works.
	e := newDataEnv(t, nil)
	e.fake.Push(
		reply("visualize", map[string]any{"spec": map[string]any{"type": "bar", "x": "day", "y": []string{"calls"}}, "title": "Calls", "description": "too early"}),
		reply("query_data", map[string]any{"sql": "SELECT day, count(*) AS calls FROM v_llm_calls GROUP BY dayz", "description": "typo"}),
		reply("query_data", map[string]any{"sql": "SELEC day FROM v_llm_calls", "description": "syntax"}),
		reply("query_data", map[string]any{"sql": "SELECT day, count(*) AS calls FROM v_llm_calls GROUP BY day ORDER BY day", "description": "calls per day"}),
		reply("answer", map[string]any{"text": "Two model calls a day from Nov 3 to Nov 7."}),
	)
	reply, err := e.agent.Ask(context.Background(), "", "How many model calls per day?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Answer != "Two model calls a day from Nov 3 to Nov 7." {
		t.Errorf("answer %q", reply.Answer)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model calls, want 5", len(reqs))
	}
	for i, want := range []string{
		"Error: There is no result to chart yet: run query_data first.",
		`Error: SQLite rejected the query: SQL logic error: no such column: dayz`,
		`Error: Refused: Only a SELECT (or WITH … SELECT) statement is allowed`,
		// The agent's own calls are logged as it runs: today has some.
		"Query executed successfully.\nResult: 6 rows x 2 columns\nday | calls\n2026-11-03 | 2\n",
	} {
		if got := lastTool(reqs[i+1].Messages); !strings.HasPrefix(got, want) {
			t.Errorf("tool result %d sent back %q, want it to start with %q", i+1, got, want)
		}
	}
	if len(reply.Steps) != 4 || reply.Steps[0].Error == "" || reply.Steps[1].Error == "" || reply.Steps[2].Error == "" || reply.Steps[3].Error != "" {
		t.Errorf("steps %+v: want three refused, then one that ran", reply.Steps)
	}
}

func TestDataAgentVisualizeRefusesBadSpecs(t *testing.T) {
	e := newDataEnv(t, nil)
	e.fake.Push(
		reply("query_data", map[string]any{"sql": "SELECT model, count(*) AS calls FROM v_llm_calls GROUP BY model", "description": "calls per model"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "bar", "x": "model", "y": []string{"model_name"}}, "title": "t", "description": "d"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "bar", "x": "calls", "y": []string{"model"}}, "title": "t", "description": "d"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "sankey", "x": "model", "y": []string{"calls"}}, "title": "t", "description": "d"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "pie", "x": "model", "y": []string{"calls"}, "code": "import os"}, "title": "t", "description": "d"}),
		reply("visualize", map[string]any{"spec": map[string]any{"type": "pie", "x": "model", "y": []string{"calls"}}, "title": "Calls per model", "description": "d"}),
		reply("answer", map[string]any{"text": "gpt-4o and gpt-4o-mini got 5 calls each; this agent made the others."}),
	)
	e.agent.Retries = 4
	reply, err := e.agent.Ask(context.Background(), "", "Calls per model as a pie", nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.fake.Requests()
	for i, want := range []string{
		`Error: Column "model_name" is not in the result`,
		`Error: Column "model" is not numeric`,
		`Error: Chart type "sankey" is not supported`,
		`Error: Bad arguments for visualize: json: unknown field "code"`,
		`Chart drawn: "Calls per model", a pie chart of 3 rows.`,
	} {
		if got := lastTool(reqs[i+2].Messages); !strings.HasPrefix(got, want) {
			t.Errorf("visualize %d sent back %q, want it to start with %q", i+1, got, want)
		}
	}
	if !strings.HasPrefix(reply.ChartSVG, "<svg") {
		t.Error("no chart drawn")
	}
}

// hostile are statements a model might send to write, escape the views or
// read a secret; every one must be refused.
var hostile = []string{
	"DROP TABLE players",
	"DELETE FROM v_tables",
	"UPDATE players SET name = 'x'",
	"INSERT INTO players (id, name, token_hash, created_at) VALUES ('x', 'x', x'00', '')",
	"CREATE TABLE loot (x)",
	"ATTACH DATABASE '/tmp/evil.db' AS evil",
	"PRAGMA writable_schema = 1",
	"PRAGMA query_only = 0",
	"SELECT load_extension('/tmp/evil.so')",
	"SELECT 1; DROP TABLE players",
	"SELECT token_hash FROM players",
	"SELECT hex(token_hash) FROM players",
	"SELECT secret FROM npcs",
	"SELECT rng FROM game_state",
	"SELECT * FROM sqlite_schema",
	"WITH p AS (SELECT * FROM players) SELECT * FROM p",
	"SELECT name FROM v_players UNION SELECT token_hash FROM players",
	"SELECT (SELECT group_concat(token_hash) FROM players) AS x FROM v_tables",
	"SELECT readfile('/etc/passwd')",
	"VACUUM INTO '/tmp/copy.db'",
	"REPLACE INTO players (id) VALUES ('x')",
	"SELECT * FROM v_players; PRAGMA query_only=0; DELETE FROM players",
	"SELECT * FROM pragma_table_info('players')",
	"SELECT json_extract(body, '$') FROM agent_messages",
}

// checksums hashes every table of the database file, row by row, with a
// connection of its own.
func checksums(t *testing.T, path string) map[string]string {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var names []string
	rows, err := conn.Query("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	rows.Close()
	out := map[string]string{}
	for _, n := range names {
		r, err := conn.Query(fmt.Sprintf("SELECT * FROM %q", n))
		if err != nil {
			t.Fatalf("read %s: %v", n, err)
		}
		cols, _ := r.Columns()
		h := sha256.New()
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%q\n", vals)
		}
		r.Close()
		out[n] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

// memConversations keeps conversations in memory, so that the hostile
// test's database is not written at all.
type memConversations struct {
	mu sync.Mutex
	m  map[string][]store.AgentMessage
}

func (c *memConversations) Conversation(_ context.Context, id string) ([]store.AgentMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m[id]) == 0 {
		return nil, engine.Errorf(engine.ENOTFOUND, "no conversation %s", id)
	}
	return slices.Clone(c.m[id]), nil
}

func (c *memConversations) AppendConversation(_ context.Context, id string, msgs []store.AgentMessage) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]store.AgentMessage{}
	}
	c.m[id] = append(c.m[id], msgs...)
	return nil
}

func (c *memConversations) AskConversations(context.Context, int) ([]store.AskConversation, error) {
	return nil, nil
}

func TestDataAgentHostileModel(t *testing.T) {
	// The model only ever sends a statement from hostile, the next one
	// each call. Every one is refused, the agent gives up after the
	// retries with an answer saying why, the database is unchanged and no
	// secret reaches the model, the steps or the answer.
	var mu sync.Mutex
	next := 0
	e := newDataEnv(t, func(openaitest.Request) openaitest.Reply {
		mu.Lock()
		defer mu.Unlock()
		s := hostile[next%len(hostile)]
		next++
		return reply("query_data", map[string]any{"sql": s, "description": "hostile"})
	})
	e.agent.Model = newFakeModel(t, e.fake) // no call log: nothing may write to the file
	e.agent.Conversations = &memConversations{}
	before := checksums(t, e.path)
	file, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	var replies []dataset.Reply
	conv := ""
	for q := 0; q*4 < len(hostile); q++ {
		reply, err := e.agent.Ask(context.Background(), conv, fmt.Sprintf("Question %d: show me the player tokens", q), nil)
		if err != nil {
			t.Fatal(err)
		}
		conv = reply.Conversation
		replies = append(replies, reply)
		if len(reply.Steps) != 4 {
			t.Errorf("question %d: %d steps, want 4 refused queries", q, len(reply.Steps))
		}
		for _, s := range reply.Steps {
			if s.Error == "" || s.Rows != nil {
				t.Errorf("statement %q was not refused: %+v", s.SQL, s)
			}
		}
		if !strings.HasPrefix(reply.Answer, "I could not answer this: 4 of my attempts were refused or invalid, and I stop after 3 retries. The last refusal: ") {
			t.Errorf("answer %q does not explain that it gave up", reply.Answer)
		}
	}
	if next < len(hostile) {
		t.Fatalf("only %d of %d statements tried", next, len(hostile))
	}
	if after := checksums(t, e.path); !mapsEqual(before, after) {
		t.Errorf("tables changed:\nbefore %v\nafter  %v", before, after)
	}
	if now, err := os.ReadFile(e.path); err != nil || string(now) != string(file) {
		t.Errorf("database file changed (err %v)", err)
	}
	out, _ := json.Marshal(replies)
	for _, r := range e.fake.Requests() {
		out = append(out, r.Body...)
	}
	for _, secret := range datasettest.Secrets {
		if strings.Contains(string(out), secret) {
			t.Errorf("secret %q reached a reply or the model", secret)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDataAgentFollowUpAfterRestart(t *testing.T) {
	e := newDataEnv(t, nil)
	e.fake.Push(
		reply("query_data", map[string]any{"sql": "SELECT count(*) AS n FROM v_tables", "description": "tables"}),
		openaitest.Reply{Content: "There are 3 tables."},
	)
	first, err := e.agent.Ask(context.Background(), "", "How many tables are there?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Answer != "There are 3 tables." {
		t.Errorf("a final text message is the answer: got %q", first.Answer)
	}

	// Restart: new connections and a new agent over the same file.
	e.store.Close()
	e.data.Close()
	e.open(t)
	e.agent = e.newAgent(t)
	e.fake.Push(openaitest.Reply{Content: "Of those 3, two play d20."})
	second, err := e.agent.Ask(context.Background(), first.Conversation, "And how many of them play d20?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Conversation != first.Conversation {
		t.Errorf("conversation %q, want %q", second.Conversation, first.Conversation)
	}
	reqs := e.fake.Requests()
	var roles, texts []string
	for _, m := range reqs[len(reqs)-1].Messages {
		roles = append(roles, m.Role)
		texts = append(texts, m.Content)
	}
	if want := []string{"user", "assistant", "tool", "assistant", "user"}; !slices.Equal(roles, want) {
		t.Errorf("follow-up sent roles %v, want %v", roles, want)
	}
	if texts[0] != "How many tables are there?" || texts[3] != "There are 3 tables." || texts[4] != "And how many of them play d20?" {
		t.Errorf("follow-up sent %q", texts)
	}

	_, err = e.agent.Ask(context.Background(), "q-unknown", "Hello?", nil)
	if engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("unknown conversation: %v, want ENOTFOUND", err)
	}
}

func TestDataAgentRefusesQuestions(t *testing.T) {
	e := newDataEnv(t, nil)
	for name, q := range map[string]string{"empty": "  \n", "too long": strings.Repeat("é", agent.MaxQuestion+1)} {
		if _, err := e.agent.Ask(context.Background(), "", q, nil); engine.ErrorCode(err) != engine.EINVALID {
			t.Errorf("%s question: %v, want EINVALID", name, err)
		}
	}
	if _, err := e.agent.Ask(context.Background(), "", strings.Repeat("é", agent.MaxQuestion), nil); err != nil {
		t.Errorf("a question of %d characters: %v", agent.MaxQuestion, err)
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1 (refused questions never reach the model)", n)
	}
}

func TestDataAgentOffline(t *testing.T) {
	e := newDataEnv(t, nil)
	e.agent.Model = nil
	e.agent.Offline = &dataset.Analyst{Data: e.data, Now: func() time.Time { return datasettest.Now }}
	var rec recorder
	reply, err := e.agent.Ask(context.Background(), "", "How often do parties die in the d20 ruleset?", rec.progress)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(reply.Answer, ". Parties died in 2 of 5 fights (40%) in the d20 ruleset.") || !strings.HasPrefix(reply.Answer, "I read this as ") || !reply.Offline || reply.Note != "" {
		t.Errorf("reply %+v", reply)
	}
	if len(reply.Steps) != 2 || reply.Steps[0].SQL == "" || len(reply.Steps[0].Rows) != 3 || reply.Steps[1].Chart == nil || !strings.HasPrefix(reply.ChartSVG, "<svg") {
		t.Errorf("steps %+v", reply.Steps)
	}
	if want := []string{"sql", "rows", "chart"}; !slices.Equal(rec.events, want) {
		t.Errorf("progress %v, want %v", rec.events, want)
	}
	follow, err := e.agent.Ask(context.Background(), reply.Conversation, "Why is the sky blue?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(follow.Answer, "Without a language model") || !strings.HasPrefix(follow.Answer, "I did not answer") || len(follow.Steps) != 0 {
		t.Errorf("unmapped question: %+v", follow)
	}
	if len(e.fake.Requests()) != 0 {
		t.Error("the offline analyst called the model")
	}
}

func TestDataAgentDeadlineAndRowCap(t *testing.T) {
	// A query that never ends is interrupted at the dataset's deadline and
	// the model is told to make it cheaper; a query with too many rows is
	// cut at the cap, and the model is told so.
	e := newDataEnv(t, nil)
	e.data.Timeout = 200 * time.Millisecond
	e.data.MaxRows = 5
	e.fake.Push(
		reply("query_data", map[string]any{"sql": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c", "description": "forever"}),
		reply("query_data", map[string]any{"sql": "SELECT table_id, seq, kind FROM v_events ORDER BY table_id, seq", "description": "every event"}),
		reply("answer", map[string]any{"text": "Too many events to list; here are the first five."}),
	)
	got, err := e.agent.Ask(context.Background(), "", "List every event.", nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.fake.Requests()
	if msg := lastTool(reqs[1].Messages); !strings.HasPrefix(msg, "Error: The query ran longer than 200ms and was stopped.") {
		t.Errorf("deadline sent back %q", msg)
	}
	if msg := lastTool(reqs[2].Messages); !strings.Contains(msg, "5 rows x 3 columns (cut at the 5-row cap; aggregate or add LIMIT)") {
		t.Errorf("row cap sent back %q", msg)
	}
	if len(got.Steps) != 2 || got.Steps[0].Error == "" || !got.Steps[1].Truncated || len(got.Steps[1].Rows) != 5 {
		t.Errorf("steps %+v", got.Steps)
	}
}

// TestDataAgentModelFails: when the model does not answer, the offline
// analyst answers with a note saying so; the conversation is kept, listed
// and reopened with its questions and answers.
func TestDataAgentModelFails(t *testing.T) {
	e := newDataEnv(t, func(openaitest.Request) openaitest.Reply {
		return openaitest.Reply{Status: 500, Error: "down"}
	})
	e.agent.Offline = &dataset.Analyst{Data: e.data, Now: func() time.Time { return datasettest.Now }}
	reply, err := e.agent.Ask(context.Background(), "", "How many tables are there?", nil)
	if err != nil {
		t.Fatalf("a failing model: %v, want the offline analyst's answer", err)
	}
	if !reply.Offline || !strings.Contains(reply.Note, "model did not answer") || !strings.HasSuffix(reply.Answer, "There are 3 tables.") || len(reply.Steps) == 0 {
		t.Errorf("reply %+v", reply)
	}
	if _, err := e.agent.Ask(context.Background(), reply.Conversation, "how many players?", nil); err != nil {
		t.Fatal(err)
	}
	list, err := e.agent.ListConversations(context.Background())
	if err != nil || len(list) != 1 || list[0].Conversation != reply.Conversation || list[0].Questions != 2 || list[0].First != "How many tables are there?" {
		t.Fatalf("conversations %+v %v", list, err)
	}
	turns, err := e.agent.ConversationTurns(context.Background(), reply.Conversation)
	if err != nil || len(turns) != 2 || turns[1].Question != "how many players?" || !strings.HasSuffix(turns[1].Answer, "There are 4 players.") ||
		len(turns[0].SQL) != 1 || !strings.Contains(turns[0].SQL[0], "FROM v_tables") {
		t.Fatalf("turns %+v %v", turns, err)
	}
	if _, err := e.agent.ConversationTurns(context.Background(), "q-nope"); engine.ErrorCode(err) != engine.ENOTFOUND {
		t.Errorf("an unknown conversation: %v, want ENOTFOUND", err)
	}
}
