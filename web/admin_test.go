package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/offline"
)

// switchModel is the offline narrator that fails, like a server answering
// 503, while fail is set.
type switchModel struct {
	offline.Narrator
	fail atomic.Bool
}

func (m *switchModel) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	if m.fail.Load() {
		return agent.Response{}, errors.New("POST /chat/completions: 503 Service Unavailable")
	}
	return m.Narrator.Complete(ctx, req)
}

// newAdminEnv is a testEnv whose model calls go through the call log
// writer into the store and the metrics, on one registry.
func newAdminEnv(t *testing.T, model agent.Model) *testEnv {
	t.Helper()
	return startEnv(t, envConfig{model: model, calls: true})
}

// wsFrame is any server frame.
type wsFrame struct {
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Status  string         `json:"status"`
	Kind    string         `json:"kind"`
	Data    map[string]any `json:"data"`
	raw     []byte
}

type wsConn struct {
	t      *testing.T
	c      *websocket.Conn
	frames chan wsFrame
	closed chan websocket.StatusCode
	all    bytes.Buffer // every frame read, for the secret check
}

func (e *testEnv) ws(tableID, role, token string) *wsConn {
	e.t.Helper()
	u := "ws" + strings.TrimPrefix(e.url, "http") + "/ws/tables/" + tableID + "?role=" + role
	hdr := http.Header{}
	if token != "" {
		hdr.Set("Authorization", "Bearer "+token)
	}
	c, _, err := websocket.Dial(context.Background(), u, &websocket.DialOptions{Subprotocols: []string{"tavern.v1"}, HTTPHeader: hdr})
	if err != nil {
		e.t.Fatalf("dial %s as %s: %v", tableID, role, err)
	}
	w := &wsConn{t: e.t, c: c, frames: make(chan wsFrame, 4096), closed: make(chan websocket.StatusCode, 1)}
	go func() {
		defer close(w.frames)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				w.closed <- websocket.CloseStatus(err)
				return
			}
			var f wsFrame
			_ = json.Unmarshal(b, &f)
			f.raw = b
			w.frames <- f
		}
	}()
	e.t.Cleanup(func() { c.CloseNow() })
	// The dial returns at the upgrade, before the table has registered the
	// socket: an event published in between reaches it inside the join's
	// snapshot (its recent events), not as an event frame. Waiting for the
	// snapshot means every later event arrives as a frame.
	w.until("join snapshot", func(f wsFrame) bool { return f.Type == "snapshot" })
	return w
}

// until reads frames until pred holds.
func (w *wsConn) until(what string, pred func(wsFrame) bool) wsFrame {
	w.t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				w.t.Fatalf("socket closed waiting for %s", what)
			}
			w.all.Write(f.raw)
			if pred(f) {
				return f
			}
		case <-deadline:
			w.t.Fatalf("no %s within 15 s", what)
		}
	}
}

func (w *wsConn) send(v any) {
	b, _ := json.Marshal(v)
	if err := w.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		w.t.Fatal(err)
	}
}

// act sends an act and returns its answer (ack or error).
func (w *wsConn) act(id, text string) wsFrame {
	w.t.Helper()
	w.send(map[string]string{"type": "act", "id": id, "text": text})
	return w.until("answer to "+id, func(f wsFrame) bool { return (f.Type == "ack" || f.Type == "error") && f.ID == id })
}

func moderationEvent(action string) func(wsFrame) bool {
	return func(f wsFrame) bool {
		return f.Type == "event" && f.Kind == "system" && f.Data["code"] == "moderation" && f.Data["action"] == action
	}
}

func narrationFor(actionID string) func(wsFrame) bool {
	return func(f wsFrame) bool {
		return f.Type == "event" && f.Kind == "narration" && f.Data["action_id"] == actionID
	}
}

// admin sends an admin API request with the admin token.
func (e *testEnv) admin(method, path string) response {
	e.t.Helper()
	return e.do(method, path, nil, testAdminToken)
}

// seat sits the token's player at the table and waits for the DM's arrival
// line, so that the player's first act is not refused as busy.
func (e *testEnv) seat(tableID, token, name string) {
	e.t.Helper()
	r := e.do("POST", "/api/tables/"+tableID+"/seats", map[string]any{"character": map[string]any{"name": name, "class": "warrior"}}, token)
	if r.status != http.StatusCreated {
		e.t.Fatalf("sit: %d %s", r.status, r.body)
	}
	var sat struct {
		Character struct {
			PlayerID string `json:"player_id"`
		} `json:"character"`
	}
	if err := json.Unmarshal(r.body, &sat); err != nil || sat.Character.PlayerID == "" {
		e.t.Fatalf("sit: %s %v", r.body, err)
	}
	e.arrive(tableID, sat.Character.PlayerID)
}

func TestAdminModeration(t *testing.T) {
	e := newAdminEnv(t, offline.Narrator{})
	_, tok := e.newPlayer("Ann")
	_, tokB := e.newPlayer("Bob")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Mod", "seats": 3}, tok)
	id := r.json(t)["id"].(string)
	e.seat(id, tok, "Aldric")
	e.seat(id, tokB, "Brina")
	ann := e.ws(id, "player", tok)
	bob := e.ws(id, "player", tokB)
	spect := e.ws(id, "spectator", "")

	t.Run("pause refuses act, chat goes on", func(t *testing.T) {
		if r := e.admin("POST", "/api/admin/tables/"+id+"/pause"); r.status != http.StatusNoContent {
			t.Fatalf("pause = %d %s", r.status, r.body)
		}
		spect.until("pause audit", moderationEvent("pause"))
		if f := ann.act("p1", "I look around"); f.Type != "error" || f.Code != "unavailable" {
			t.Errorf("act on a paused table = %+v, want error unavailable", f)
		}
		ann.send(map[string]string{"type": "say", "id": "s1", "text": "still here"})
		spect.until("chat while paused", func(f wsFrame) bool { return f.Kind == "chat" })
		if snap := e.do("GET", "/api/tables/"+id, nil, "").json(t); snap["paused"] != true {
			t.Errorf("snapshot paused = %v", snap["paused"])
		}
		ts := e.admin("GET", "/api/admin/tables").json(t)["tables"].([]any)
		if row := ts[0].(map[string]any); row["paused"] != true || row["connections"].(map[string]any)["spectators"].(float64) != 1 {
			t.Errorf("admin row %v", row)
		}
		if r := e.admin("POST", "/api/admin/tables/"+id+"/resume"); r.status != http.StatusNoContent {
			t.Fatalf("resume = %d", r.status)
		}
		spect.until("resume audit", moderationEvent("resume"))
		if f := ann.act("m", "we go to the old mill"); f.Type != "ack" {
			t.Fatalf("act after resume = %+v", f)
		}
		ann.until("narration", func(f wsFrame) bool { return f.Kind == "narration" })
	})

	t.Run("end-combat ends the fight with error_abort", func(t *testing.T) {
		if f := ann.act("k", "I attack Snikket"); f.Type != "ack" {
			t.Fatalf("attack = %+v", f)
		}
		spect.until("combat", func(f wsFrame) bool { return f.Kind == "combat_started" })
		// Wait until no turn runs (the fight waits for a player).
		deadline := time.Now().Add(15 * time.Second)
		for {
			r := e.admin("POST", "/api/admin/tables/"+id+"/end-combat")
			if r.status == http.StatusNoContent {
				break
			}
			if r.status != http.StatusConflict || time.Now().After(deadline) {
				t.Fatalf("end-combat = %d %s", r.status, r.body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		f := spect.until("combat_ended", func(f wsFrame) bool { return f.Kind == "combat_ended" })
		if f.Data["outcome"] != string(engine.OutcomeErrorAbort) {
			t.Errorf("outcome %v", f.Data["outcome"])
		}
		if snap := e.do("GET", "/api/tables/"+id, nil, "").json(t); snap["mode"] != engine.ModeNarrative || snap["combat"] != nil {
			t.Errorf("after end-combat: mode %v combat %v", snap["mode"], snap["combat"])
		}
		if r := e.admin("POST", "/api/admin/tables/"+id+"/end-combat"); r.status != http.StatusBadRequest {
			t.Errorf("second end-combat = %d, want 400", r.status)
		}
		if f := ann.act("x", "I look around the mill"); f.Type != "ack" {
			t.Errorf("exploration after the fight: %+v", f)
		}
		ann.until("narration", func(f wsFrame) bool { return f.Kind == "narration" && f.Data["action_id"] != nil })
	})

	t.Run("free a seat closes the player's socket with 4003", func(t *testing.T) {
		if r := e.admin("DELETE", "/api/admin/tables/"+id+"/seats/2"); r.status != http.StatusNoContent {
			t.Fatalf("free seat = %d %s", r.status, r.body)
		}
		spect.until("free_seat audit", moderationEvent("free_seat"))
		spect.until("player_left", func(f wsFrame) bool { return f.Kind == "player_left" })
		for range bob.frames {
		}
		if code := <-bob.closed; code != 4003 {
			t.Errorf("Bob's socket closed with %d, want 4003", code)
		}
		snap := e.do("GET", "/api/tables/"+id, nil, "").json(t)
		if party := snap["party"].([]any); len(party) != 1 {
			t.Errorf("party after freeing seat 2: %d", len(party))
		}
		if r := e.admin("DELETE", "/api/admin/tables/"+id+"/seats/2"); r.status != http.StatusNotFound {
			t.Errorf("freeing an empty seat = %d", r.status)
		}
	})

	t.Run("close a table", func(t *testing.T) {
		if r := e.admin("DELETE", "/api/admin/tables/"+id); r.status != http.StatusNoContent {
			t.Fatalf("close = %d %s", r.status, r.body)
		}
		for _, tb := range e.do("GET", "/api/tables", nil, "").json(t)["tables"].([]any) {
			if tb.(map[string]any)["id"] == id {
				t.Errorf("closed table still in the lobby")
			}
		}
		wantError(t, e.do("GET", "/api/tables/"+id, nil, ""), http.StatusNotFound, "not_found")
		wantError(t, e.do("POST", "/api/tables/"+id+"/seats", map[string]any{"character": map[string]any{"name": "Cid"}}, tokB), http.StatusNotFound, "not_found")
		// History kept, read-only, for the operator.
		if r := e.admin("GET", "/admin/tables/"+id); r.status != 200 || !strings.Contains(string(r.body), "closed") {
			t.Errorf("admin view of a closed table: %d", r.status)
		}
		if r := e.admin("GET", "/api/admin/tables/"+id+"/history/narrative"); r.status != 200 || len(r.json(t)["messages"].([]any)) == 0 {
			t.Errorf("history of a closed table: %d %.200s", r.status, r.body)
		}
		if r := e.admin("POST", "/api/admin/tables/"+id+"/pause"); r.status != http.StatusConflict {
			t.Errorf("pausing a closed table = %d", r.status)
		}
	})
}

func TestAdminAbandonAndRetry(t *testing.T) {
	m := &switchModel{}
	e := newAdminEnv(t, m)
	_, tok := e.newPlayer("Ann")
	r := e.do("POST", "/api/tables", map[string]any{"name": "Stuck", "seats": 2}, tok)
	id := r.json(t)["id"].(string)
	e.seat(id, tok, "Aldric")
	ann := e.ws(id, "player", tok)

	m.fail.Store(true)
	if f := ann.act("a1", "I open the door"); f.Type != "ack" {
		t.Fatalf("act = %+v", f)
	}
	ann.until("failure notice", func(f wsFrame) bool { return f.Kind == "system" && f.Data["code"] == "unavailable" })
	// The admin sees the action failed, with attempts and the error.
	var pending map[string]any
	for range 100 {
		row := e.admin("GET", "/api/admin/tables").json(t)["tables"].([]any)[0].(map[string]any)
		if ps := row["pending"].([]any); len(ps) == 1 && ps[0].(map[string]any)["state"] == "failed" {
			pending = ps[0].(map[string]any)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pending == nil || pending["attempts"].(float64) < 1 || !strings.Contains(pending["error"].(string), "503") {
		t.Fatalf("pending after a failure: %v", pending)
	}
	actionID := pending["action_id"].(string)
	// The acting player's snapshot shows the state, not the error.
	snap := e.do("GET", "/api/tables/"+id, nil, "").json(t)
	ps, _ := snap["pending"].([]any)
	if len(ps) != 1 || ps[0].(map[string]any)["state"] != "failed" || ps[0].(map[string]any)["error"] != nil {
		t.Errorf("snapshot pending = %v", snap["pending"])
	}

	if r := e.admin("POST", "/api/admin/tables/"+id+"/pending/"+actionID+"/abandon"); r.status != http.StatusNoContent {
		t.Fatalf("abandon = %d %s", r.status, r.body)
	}
	f := ann.until("abandon audit", moderationEvent("abandon"))
	if f.Data["action_id"] != actionID {
		t.Errorf("abandon event %v", f.Data)
	}
	wantError(t, e.admin("POST", "/api/admin/tables/"+id+"/pending/"+actionID+"/abandon"), http.StatusNotFound, "not_found")

	// The next action plays; the abandoned one never does.
	m.fail.Store(false)
	if f := ann.act("a2", "I knock on the door"); f.Type != "ack" {
		t.Fatalf("act after abandon = %+v", f)
	}
	ann.until("narration", func(f wsFrame) bool { return f.Kind == "narration" && f.Data["action_id"] != nil })
	evs := e.do("GET", "/api/tables/"+id+"/events?since=0", nil, "").json(t)["events"].([]any)
	abandons := 0
	for _, ev := range evs {
		ev := ev.(map[string]any)
		d := ev["data"].(map[string]any)
		if ev["kind"] == "narration" && d["action_id"] == actionID {
			t.Errorf("the abandoned action was played: %v", ev)
		}
		if d["action"] == "abandon" {
			abandons++
		}
	}
	if abandons != 1 {
		t.Errorf("%d abandon events, want 1", abandons)
	}

	// Retry: a failed action is played again at once.
	m.fail.Store(true)
	ann.act("a3", "I try the window")
	ann.until("failure notice", func(f wsFrame) bool { return f.Kind == "system" && f.Data["code"] == "unavailable" })
	var retryID string
	for range 100 {
		row := e.admin("GET", "/api/admin/tables").json(t)["tables"].([]any)[0].(map[string]any)
		if ps := row["pending"].([]any); len(ps) == 1 && ps[0].(map[string]any)["state"] == "failed" {
			retryID = ps[0].(map[string]any)["action_id"].(string)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.fail.Store(false)
	if r := e.admin("POST", "/api/admin/tables/"+id+"/pending/"+retryID+"/retry"); r.status != http.StatusNoContent && r.status != http.StatusConflict {
		t.Fatalf("retry = %d %s", r.status, r.body)
	}
	ann.until("retried narration", narrationFor(retryID))

	// The LLM stats see the failures as 5xx, and the failed call links
	// to its turn.
	// The call log is written behind a queue, so the last failure may land
	// a moment after the turn that followed it: poll, with a hang guard.
	var g map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		groups := e.admin("GET", "/api/admin/llm?group=agent&since="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)).json(t)["groups"].([]any)
		g = groups[0].(map[string]any)
		kinds, _ := g["errors_by_kind"].(map[string]any)
		server, _ := kinds["server"].(float64)
		if g["errors"].(float64) >= 2 && server >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("llm group %v", g)
		}
	}
	page := string(e.admin("GET", "/admin/llm").body)
	if !strings.Contains(page, `href="/admin/tables/`+id+`?agent=narrative#t`) {
		t.Errorf("LLM page has no link from a failed call to its turn")
	}
}

func TestAdminMetrics(t *testing.T) {
	e := newAdminEnv(t, offline.Narrator{})
	_, tok := e.newPlayer("Ann")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Metered", "seats": 2}, tok).json(t)["id"].(string)
	e.seat(id, tok, "Aldric")
	ann := e.ws(id, "player", tok)
	spect := e.ws(id, "spectator", "")
	for _, text := range []string{"I look around", "we go to the old mill"} {
		ann.act(text, text)
		ann.until("narration", func(f wsFrame) bool { return f.Kind == "narration" && f.Data["action_id"] != nil })
	}
	e.admin("POST", "/api/admin/tables/"+id+"/pause")
	spect.until("pause", moderationEvent("pause"))

	var fams map[string]*dto.MetricFamily
	// The call log is written off the model path: wait for it to land.
	for range 200 {
		r := e.admin("GET", "/metrics")
		p := expfmt.NewTextParser(model.UTF8Validation)
		var err error
		if fams, err = p.TextToMetricFamilies(bytes.NewReader(r.body)); err != nil {
			t.Fatalf("parse /metrics: %v", err)
		}
		if f := fams["tavern_llm_requests_total"]; f != nil && sum(f) >= 2 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, labels := range map[string][]string{
		"tavern_tables":                       {"state"},
		"tavern_sockets":                      {"role"},
		"tavern_turns_total":                  {"agent", "result"},
		"tavern_turn_duration_seconds":        {"agent"},
		"tavern_events_total":                 nil,
		"tavern_event_deliveries_total":       {"to"},
		"tavern_llm_requests_total":           {"agent", "model", "result"},
		"tavern_llm_request_duration_seconds": {"agent", "model"},
		"tavern_llm_tokens_total":             {"kind", "model"},
		"tavern_llm_cost_usd_total":           {"model"},
		"tavern_moderation_total":             {"action"},
		"tavern_http_requests_total":          {"code", "method", "route"},
		"tavern_ack_seconds":                  {"frame"},
		"tavern_store_commit_seconds":         {"result"},
		"tavern_store_transaction_seconds":    nil,
		"tavern_store_transaction_commits":    nil,
		"tavern_store_queue":                  nil,
	} {
		f := fams[name]
		if f == nil || len(f.Metric) == 0 {
			t.Errorf("%s missing", name)
			continue
		}
		for _, m := range f.Metric {
			var got []string
			for _, l := range m.Label {
				got = append(got, l.GetName())
				if l.GetName() == "table" || strings.HasPrefix(l.GetValue(), "t-") {
					t.Errorf("%s has a table label: %v", name, m.Label)
				}
			}
			if strings.Join(got, ",") != strings.Join(labels, ",") {
				t.Errorf("%s labels %v, want %v", name, got, labels)
			}
		}
	}
	wantValue := func(name string, labels map[string]string, min float64) {
		t.Helper()
		for _, m := range fams[name].GetMetric() {
			if matches(m, labels) && value(m) >= min {
				return
			}
		}
		t.Errorf("%s%v did not reach %v", name, labels, min)
	}
	wantValue("tavern_turns_total", map[string]string{"agent": "narrative", "result": "ok"}, 2)
	wantValue("tavern_llm_requests_total", map[string]string{"agent": "narrative", "model": "offline", "result": "ok"}, 2)
	wantValue("tavern_llm_tokens_total", map[string]string{"kind": "prompt"}, 1)
	wantValue("tavern_llm_cost_usd_total", nil, 1e-9)
	wantValue("tavern_events_total", nil, 5)
	wantValue("tavern_event_deliveries_total", map[string]string{"to": "socket"}, 5)
	wantValue("tavern_sockets", map[string]string{"role": "spectator"}, 1)
	wantValue("tavern_tables", map[string]string{"state": "paused"}, 1)
	wantValue("tavern_moderation_total", map[string]string{"action": "pause"}, 1)
	wantValue("tavern_turn_duration_seconds", map[string]string{"agent": "narrative"}, 2)
	// Two acts, two turns, the sit and the pause: at least six commits.
	wantValue("tavern_store_commit_seconds", map[string]string{"result": "ok"}, 6)
	wantValue("tavern_store_transaction_seconds", nil, 1)
}

func sum(f *dto.MetricFamily) float64 {
	s := 0.0
	for _, m := range f.Metric {
		s += value(m)
	}
	return s
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

func matches(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.Label {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// TestAdminSecrets: an NPC's secret is on the admin table view and in no
// player or spectator view (snapshot, events, pages, socket frames).
func TestAdminSecrets(t *testing.T) {
	e := newAdminEnv(t, offline.Narrator{})
	_, tok := e.newPlayer("Ann")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Secrets", "seats": 2}, tok).json(t)["id"].(string)
	e.seat(id, tok, "Aldric")
	ann := e.ws(id, "player", tok)
	spect := e.ws(id, "spectator", "")
	for _, text := range []string{"I talk to Maren Voss", "I ask Old Wenna about the Lantern", "we go to the old mill"} {
		ann.act(text, text)
		ann.until("narration", func(f wsFrame) bool { return f.Kind == "narration" && f.Data["action_id"] != nil })
	}
	spect.until("narration", func(f wsFrame) bool { return f.Kind == "narration" && f.Data["action_id"] != nil })

	v := e.admin("GET", "/api/admin/tables/"+id).json(t)
	var secrets []string
	for _, n := range v["world"].(map[string]any)["npcs"].(map[string]any) {
		if s, _ := n.(map[string]any)["secret"].(string); s != "" {
			secrets = append(secrets, s)
		}
	}
	if len(secrets) == 0 {
		t.Fatal("the adventure has no NPC secret to test with")
	}
	page := string(e.admin("GET", "/admin/tables/"+id).body)
	for _, s := range secrets {
		if !strings.Contains(page, templEscape(s)) {
			t.Errorf("admin table view lacks the secret %q", s)
		}
	}
	views := map[string]string{
		"snapshot":       string(e.do("GET", "/api/tables/"+id, nil, "").body),
		"events":         string(e.do("GET", "/api/tables/"+id+"/events?since=0&limit=500", nil, "").body),
		"table page":     string(e.do("GET", "/tables/"+id, nil, "").body),
		"player page":    string(e.do("GET", "/tables/"+id, nil, tok).body),
		"lobby":          string(e.do("GET", "/", nil, "").body),
		"player socket":  ann.all.String(),
		"spectator feed": spect.all.String(),
	}
	for name, body := range views {
		for _, s := range secrets {
			if strings.Contains(body, s) || strings.Contains(body, templEscape(s)) {
				t.Errorf("%s shows the secret %q", name, s)
			}
		}
	}
	// Players cannot reach the admin side at all.
	wantError(t, e.do("GET", "/api/admin/tables/"+id, nil, tok), http.StatusUnauthorized, "unauthorized")
}

// templEscape escapes s as templ does in text.
func templEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;")
	return r.Replace(s)
}

// rateLimited is the offline narrator answering as a server that rate
// limits, once fail is set.
type rateLimited struct {
	offline.Narrator
	fail atomic.Bool
}

func (m *rateLimited) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	if m.fail.Load() {
		return agent.Response{}, errors.New(`POST "http://127.0.0.1/v1/chat/completions": 429 Too Many Requests`)
	}
	return m.Narrator.Complete(ctx, req)
}

// TestAdminOverviewModelHealth: the overview page and its API say whether
// the model answers; once it rate limits, they show it failing with the
// error's kind and rate, and /readyz still answers 200.
func TestAdminOverviewModelHealth(t *testing.T) {
	m := &rateLimited{}
	e := newAdminEnv(t, m)
	_, tok := e.newPlayer("Ann")
	id := e.do("POST", "/api/tables", map[string]any{"name": "Health", "seats": 2}, tok).json(t)["id"].(string)
	e.seat(id, tok, "Aldric") // the arrival is narrated: the model answers

	page := string(e.admin("GET", "/admin").body)
	wantHas(t, page, []string{`id="model-health"`, `data-model="offline"`, `<span class="pill ok">answers</span>`}, "failing")

	m.fail.Store(true)
	ann := e.ws(id, "player", tok)
	if f := ann.act("a1", "I look around"); f.Type != "ack" {
		t.Fatalf("act: %+v", f)
	}
	type health struct {
		Model         string  `json:"model"`
		State         string  `json:"state"`
		LastErrorKind string  `json:"last_error_kind"`
		Errors5m      int     `json:"errors_5m"`
		Calls5m       int     `json:"calls_5m"`
		ErrorRate5m   float64 `json:"error_rate_5m"`
	}
	var o struct{ Models []health }
	// The turn runs after the ack: wait for its failed call.
	for range 500 {
		if err := json.Unmarshal(e.admin("GET", "/api/admin/overview").body, &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Models) == 1 && o.Models[0].Errors5m > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(o.Models) != 1 {
		t.Fatalf("models %+v, want the offline narrator alone", o.Models)
	}
	h := o.Models[0]
	if h.Model != "offline" || h.State != "failing" || h.LastErrorKind != "rate_limit" || h.Errors5m < 1 || h.Calls5m <= h.Errors5m ||
		h.ErrorRate5m != float64(h.Errors5m)/float64(h.Calls5m) {
		t.Errorf("overview models %+v, want offline failing with rate_limit, some calls answered", h)
	}

	page = string(e.admin("GET", "/admin").body)
	wantHas(t, page, []string{`data-model="offline"`, `<span class="pill failed">failing</span>`, `<span class="pill failed">rate limit</span>`,
		"429 Too Many Requests"}, "answers</span>")
	// A retry of the turn may have failed since: the rate, not its value.
	if !regexp.MustCompile(`<td class="num">[1-9]\d*% \([1-9]\d* of \d+\)</td>`).MatchString(page) {
		t.Errorf("no error rate on the overview page:\n%s", page)
	}
	if r := e.do("GET", "/readyz", nil, ""); r.status != http.StatusOK {
		t.Errorf("/readyz with a failing model: %d %s, want 200", r.status, r.body)
	}
}
