package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
	"tavern/internal/db"
	"tavern/internal/openai"
	"tavern/internal/openai/openaitest"
	"tavern/web"
)

// askEnv is a running Tavern whose data agent reads a seeded database
// of its own; with a fake OpenAI server for its model, or the offline
// analyst.
type askEnv struct {
	*testEnv
	fake  *openaitest.Server
	agent *agent.DataAgent
	// path is the seeded database file.
	path string
}

func newAskEnv(t *testing.T, online bool) *askEnv {
	t.Helper()
	ctx := context.Background()
	path := datasettest.MustSeed(t)
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := dataset.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		data.Close()
		store.Close()
	})
	a := &agent.DataAgent{Data: data, Conversations: store,
		Offline: &dataset.Analyst{Data: data, Now: func() time.Time { return datasettest.Now }}}
	env := &askEnv{agent: a, path: path}
	if online {
		env.fake = openaitest.New(t, nil)
		a.Model = openai.New(openai.Config{APIKey: "sk-test", BaseURL: env.fake.URL, Model: "fake-analyst", MaxAttempts: 1, CallTimeout: 5 * time.Second})
	}
	env.testEnv = startEnv(t, envConfig{web: func(c *web.Config) { c.Ask = a }})
	return env
}

func (e *askEnv) post(t *testing.T, body string, accept string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/api/admin/ask", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func decodeBody[T any](t *testing.T, res *http.Response) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func toolReply(name string, args any) openaitest.Reply {
	return openaitest.Reply{ToolCalls: []agent.ToolCall{openaitest.Call(name, args)}}
}

func (e *askEnv) script() {
	e.fake.Push(
		toolReply("query_data", map[string]any{"sql": "SELECT model, round(sum(cost_usd), 2) AS cost_usd FROM v_llm_calls GROUP BY model ORDER BY cost_usd DESC", "description": "Cost per model"}),
		toolReply("visualize", map[string]any{"spec": map[string]any{"type": "bar", "x": "model", "y": []string{"cost_usd"}}, "title": "LLM cost per model", "description": "Cost per model"}),
		toolReply("answer", map[string]any{"text": "gpt-4o cost $0.30 of the $0.36."}),
	)
}

func TestAskNeedsTheOperator(t *testing.T) {
	e := newAskEnv(t, true)
	for _, tc := range []struct{ method, path, body, ctype string }{
		{"POST", "/api/admin/ask", `{"question": "How many tables?"}`, "application/json"},
		{"GET", "/admin/ask", "", ""},
		{"POST", "/admin/ask", "question=How+many+tables%3F", "application/x-www-form-urlencoded"},
	} {
		for _, auth := range []string{"", "Bearer wrong-token"} {
			req, _ := http.NewRequest(tc.method, e.url+tc.path, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			res, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s (%q): %d, want 401", tc.method, tc.path, auth, res.StatusCode)
			}
			if strings.Contains(string(b), "ask-answer") || strings.Contains(string(b), "v_tables") {
				t.Errorf("%s %s (%q) answered without the admin token", tc.method, tc.path, auth)
			}
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d model calls without the admin token", n)
	}
}

func TestAskAPIRefuses(t *testing.T) {
	e := newAskEnv(t, true)
	for name, tc := range map[string]struct {
		body   string
		status int
		code   string
	}{
		"empty":                {`{"question": "   "}`, 400, "bad_request"},
		"missing":              {`{}`, 400, "bad_request"},
		"too long":             {`{"question": "` + strings.Repeat("x", agent.MaxQuestion+1) + `"}`, 400, "bad_request"},
		"not json":             {`question=hi`, 400, "bad_request"},
		"unknown conversation": {`{"question": "hi", "conversation": "q-0000000000000000"}`, 404, "not_found"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, accept := range []string{"", "text/event-stream"} {
				res := e.post(t, tc.body, accept)
				if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("accept %q: status %d %s, want %d JSON", accept, res.StatusCode, res.Header.Get("Content-Type"), tc.status)
				}
				body := decodeBody[web.ErrorBody](t, res)
				if body.Error.Code != tc.code || body.Error.Message == "" {
					t.Errorf("accept %q: error %+v, want code %s", accept, body.Error, tc.code)
				}
			}
		})
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d model calls for refused questions", n)
	}
}

// askWire is the reply of POST /api/admin/ask by the protocol's names.
type askWire struct {
	Conversation string `json:"conversation"`
	Question     string `json:"question"`
	Answer       string `json:"answer"`
	Steps        []struct {
		SQL     string          `json:"sql"`
		Columns []string        `json:"columns"`
		Rows    [][]any         `json:"rows"`
		Chart   json.RawMessage `json:"chart"`
		Error   string          `json:"error"`
	} `json:"steps"`
	ChartSVG string `json:"chart_svg"`
}

func TestAskAPIAnswersAndFollowsUp(t *testing.T) {
	e := newAskEnv(t, true)
	e.script()
	res := e.post(t, `{"question": "Which model costs the most?"}`, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	got := decodeBody[askWire](t, res)
	if got.Conversation == "" || got.Question != "Which model costs the most?" || got.Answer != "gpt-4o cost $0.30 of the $0.36." {
		t.Errorf("reply %+v", got)
	}
	if len(got.Steps) != 2 || !slices.Equal(got.Steps[0].Columns, []string{"model", "cost_usd"}) || len(got.Steps[0].Rows) != 2 ||
		string(got.Steps[1].Chart) != `{"type":"bar","x":"model","y":["cost_usd"],"title":"LLM cost per model"}` {
		t.Errorf("steps %+v", got.Steps)
	}
	if !strings.HasPrefix(got.ChartSVG, "<svg") {
		t.Errorf("chart_svg %.40q", got.ChartSVG)
	}

	e.fake.Push(openaitest.Reply{Content: "gpt-4o-mini cost $0.06."})
	body, _ := json.Marshal(map[string]string{"question": "And the cheapest?", "conversation": got.Conversation})
	res = e.post(t, string(body), "")
	follow := decodeBody[dataset.Reply](t, res)
	if follow.Conversation != got.Conversation || follow.Answer != "gpt-4o-mini cost $0.06." {
		t.Errorf("follow-up %+v", follow)
	}
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1].Messages
	if last[0].Content != "Which model costs the most?" || last[len(last)-1].Content != "And the cheapest?" {
		t.Errorf("the follow-up did not carry the conversation: %+v", last)
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	name string
	data string
}

func readEvents(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAskAPIStreamsProgress(t *testing.T) {
	e := newAskEnv(t, true)
	e.fake.Push(toolReply("query_data", map[string]any{"sql": "SELECT token_hash FROM players", "description": "sneaky"}))
	e.script()
	res := e.post(t, `{"question": "Which model costs the most?"}`, "text/event-stream")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	evs := readEvents(t, res.Body)
	var names []string
	for _, ev := range evs {
		names = append(names, ev.name)
	}
	if want := []string{"sql", "rows", "sql", "rows", "chart", "answer"}; !slices.Equal(names, want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	var refused, rows, chartStep dataset.Step
	var reply dataset.Reply
	for i, v := range map[int]any{1: &refused, 3: &rows, 4: &chartStep, 5: &reply} {
		if err := json.Unmarshal([]byte(evs[i].data), v); err != nil {
			t.Fatal(err)
		}
	}
	if refused.Error == "" || refused.SQL != "SELECT token_hash FROM players" {
		t.Errorf("refused step %+v", refused)
	}
	if rows.Error != "" || len(rows.Rows) != 2 {
		t.Errorf("rows step %+v", rows)
	}
	if !strings.HasPrefix(chartStep.SVG, "<svg") {
		t.Errorf("chart step %+v", chartStep)
	}
	if reply.Answer != "gpt-4o cost $0.30 of the $0.36." || len(reply.Steps) != 3 || reply.Conversation == "" {
		t.Errorf("answer event %+v", reply)
	}
	for _, secret := range datasettest.Secrets {
		for _, ev := range evs {
			if strings.Contains(ev.data, secret) {
				t.Errorf("secret %q in event %s", secret, ev.name)
			}
		}
	}
}

func TestAskPageWithoutScript(t *testing.T) {
	e := newAskEnv(t, false)
	get, _ := http.NewRequest(http.MethodGet, e.url+"/admin/ask", nil)
	get.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err := e.client.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), `<form id="ask-form" class="ask-form" method="post" action="/admin/ask">`) {
		t.Fatalf("GET /admin/ask: %d\n%s", res.StatusCode, page)
	}

	form := func(v url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, e.url+"/admin/ask", strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+testAdminToken)
		res, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	st, page2 := form(url.Values{"question": {"How often do parties die in the d20 ruleset?"}})
	if st != http.StatusOK {
		t.Fatalf("POST /admin/ask: %d\n%s", st, page2)
	}
	if strings.Contains(page2, "ask-spec") || strings.Contains(page2, "&#34;type&#34;") {
		t.Error("the page shows the raw chart spec")
	}
	for _, want := range []string{
		`<p class="ask-answer">I read this as the share of fights that ended with “party died” in the d20 ruleset. Parties died in 2 of 5 fights (40%) in the d20 ruleset.</p>`,
		`<pre class="ask-sql"><code>SELECT CASE outcome`,
		`<th>outcome</th><th>fights</th><th>pct</th>`,
		`<td>party died</td><td>2</td><td>40</td>`,
		`<img class="ask-chart" alt="Fight outcomes in the d20 ruleset" src="data:image/svg+xml;base64,`,
		`name="conversation" id="ask-conversation" value="q-`,
		`Follow-up question`,
	} {
		if !strings.Contains(page2, want) {
			t.Errorf("answer page lacks %q", want)
		}
	}
	i := strings.Index(page2, `id="ask-conversation" value="`) + len(`id="ask-conversation" value="`)
	conv := page2[i : i+len("q-0123456789abcdef")]
	st, page3 := form(url.Values{"question": {"How many players?"}, "conversation": {conv}})
	if st != http.StatusOK || !strings.Contains(page3, "There are 4 players.") || !strings.Contains(page3, `value="`+conv+`"`) {
		t.Errorf("follow-up page %d lacks the answer or the conversation", st)
	}
	// The conversation is listed and reopened, by the API and the page.
	var list struct {
		Conversations []struct {
			Conversation string `json:"conversation"`
			Questions    int    `json:"questions"`
		} `json:"conversations"`
	}
	if st := e.getJSON("/api/admin/ask", &list); st != http.StatusOK || len(list.Conversations) != 1 || list.Conversations[0].Conversation != conv || list.Conversations[0].Questions != 2 {
		t.Errorf("GET /api/admin/ask: %d %+v", st, list)
	}
	var turns struct {
		Turns []struct {
			Question, Answer string
			SQL              []string
		} `json:"turns"`
	}
	if st := e.getJSON("/api/admin/ask/"+conv, &turns); st != http.StatusOK || len(turns.Turns) != 2 || turns.Turns[1].Question != "How many players?" {
		t.Errorf("GET /api/admin/ask/%s: %d %+v", conv, st, turns)
	}
	if st := e.getJSON("/api/admin/ask/q-nope", nil); st != http.StatusNotFound {
		t.Errorf("an unknown conversation: %d, want 404", st)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url+"/admin/ask?conversation="+conv, nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err = e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if reopened := string(b); !strings.Contains(reopened, `class="ask-reply ask-past"`) || !strings.Contains(reopened, "How often do parties die in the d20 ruleset?") ||
		!strings.Contains(reopened, `id="ask-history"`) {
		t.Errorf("the reopened conversation's page lacks its questions or the list")
	}
	st, page4 := form(url.Values{"question": {""}})
	if st != http.StatusBadRequest || !strings.Contains(page4, `id="ask-error" role="alert">Ask a question.</p>`) {
		t.Errorf("empty question: %d", st)
	}
}

// getJSON GETs path with the admin token and decodes the answer into out
// (if not nil); it returns the status.
func (e *askEnv) getJSON(path string, out any) int {
	req, _ := http.NewRequest(http.MethodGet, e.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		_ = json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}
