package storetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tavern/internal/engine"
	"tavern/internal/store"
)

// OperatorStore is a Store that also serves the operator's budgets,
// alerts, players, console users and Ask list (PROTOCOL.md "Operator,
// continued").
type OperatorStore interface {
	Store
	OldestOpenActions(ctx context.Context) (map[string]time.Time, error)
	AskConversations(ctx context.Context, limit int) ([]store.AskConversation, error)
	SetTableBudget(ctx context.Context, tableID string, usd float64, by string) error
	TableBudgets(ctx context.Context) ([]store.TableBudget, error)
	SpendSince(ctx context.Context, since time.Time) ([]store.Spend, error)
	CreateConsoleUser(ctx context.Context, u store.ConsoleUser, tokenHash []byte) error
	ConsoleUsers(ctx context.Context) ([]store.ConsoleUser, error)
	ConsoleUserByTokenHash(ctx context.Context, hash []byte) (store.ConsoleUser, error)
	RevokeConsoleUser(ctx context.Context, id string) error
	SearchPlayers(ctx context.Context, q string, limit int) ([]store.PlayerRow, error)
	PlayerDetail(ctx context.Context, id string) (store.PlayerDetail, error)
	SetPlayerBan(ctx context.Context, id string, banned bool, reason string) error
	ExportPlayer(ctx context.Context, id string) (store.PlayerExport, error)
	ErasePlayer(ctx context.Context, id string) error
}

// RunOperator runs the operator cases of the suite; open returns a new,
// empty store for one test (the suite closes it).
func RunOperator(t *testing.T, open func(t *testing.T) OperatorStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s OperatorStore)
	}{
		{"OpenActionsAndAskList", testOpenActionsAndAskList},
		{"Budgets", testBudgets},
		{"ConsoleUsers", testConsoleUsers},
		{"PlayersBanExportErase", testPlayersBanExportErase},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			tc.fn(t, s)
		})
	}
}

func testOpenActionsAndAskList(t *testing.T, s OperatorStore) {
	createTable(t, s, "t1", fightingState(t))
	for i, id := range []string{"a1", "a2"} {
		p := &engine.PendingAction{ID: id, PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: id, Text: "go", CreatedAt: at.Add(time.Duration(i) * time.Minute)}
		if err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: p}); err != nil {
			t.Fatal(err)
		}
	}
	open, err := s.OldestOpenActions(ctx)
	if err != nil || len(open) != 1 || !open["t1"].Equal(at) {
		t.Fatalf("oldest open actions %v %v", open, err)
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Resolve: []string{"a1", "a2"}}); err != nil {
		t.Fatal(err)
	}
	if open, err := s.OldestOpenActions(ctx); err != nil || len(open) != 0 {
		t.Fatalf("open actions once resolved %v %v", open, err)
	}

	if list, err := s.AskConversations(ctx, 0); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("no conversations: %v %v", list, err)
	}
	ask := func(id string, turn int, q string) {
		t.Helper()
		msgs := []store.AgentMessage{{Turn: turn, Body: message("user", q)}, {Turn: turn, Body: message("assistant", "yes")}}
		if err := s.AppendConversation(ctx, id, msgs); err != nil {
			t.Fatal(err)
		}
	}
	ask("c1", 1, "how many tables?")
	ask("c2", 1, "who won?")
	ask("c1", 2, "and yesterday?")
	list, err := s.AskConversations(ctx, 10)
	if err != nil || len(list) != 2 || list[0].ID != "c1" || list[0].Questions != 2 || list[1].Questions != 1 ||
		!strings.Contains(string(list[0].First), "how many tables?") || list[0].UpdatedAt.Before(list[0].StartedAt) {
		t.Fatalf("conversations, the most recent first: %+v %v", list, err)
	}
	if list, _ := s.AskConversations(ctx, 1); len(list) != 1 {
		t.Errorf("limit 1: %d conversations", len(list))
	}
}

func testBudgets(t *testing.T, s OperatorStore) {
	wantCode(t, s.SetTableBudget(ctx, "nope", 1, "admin"), engine.ENOTFOUND)
	createTable(t, s, "t1", fightingState(t))
	createTable(t, s, "t2", fightingState(t))
	if err := s.SetTableBudget(ctx, "t1", 2.5, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTableBudget(ctx, "t2", 1, "ann"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTableBudget(ctx, "t1", 3, "bo"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTableBudget(ctx, "t2", 0, "admin"); err != nil {
		t.Fatal(err)
	}
	b, err := s.TableBudgets(ctx)
	if err != nil || len(b) != 1 || b[0] != (store.TableBudget{TableID: "t1", USDPerDay: 3, SetBy: "bo"}) {
		t.Fatalf("budgets %+v %v", b, err)
	}

	day1 := time.Date(2026, 11, 2, 23, 0, 0, 0, time.UTC)
	calls := []store.LLMCall{
		{TableID: "t1", Agent: "narrative", Model: "m", Started: day1.Add(-48 * time.Hour), CostUSD: 9},
		{TableID: "t1", Agent: "narrative", Model: "m", Started: day1, CostUSD: 0.25},
		{TableID: "t2", Agent: "narrative", Model: "m", Started: day1.Add(time.Minute), CostUSD: 1},
		{TableID: "t1", Agent: "combat", Model: "m", Started: day1.Add(2 * time.Hour), CostUSD: 0.5},
	}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Calls: calls}); err != nil {
		t.Fatal(err)
	}
	spend, err := s.SpendSince(ctx, day1.Add(10*time.Minute)) // from the start of its day
	want := []store.Spend{{Day: "2026-11-03", TableID: "t1", Calls: 1, USD: 0.5}, {Day: "2026-11-02", TableID: "t2", Calls: 1, USD: 1},
		{Day: "2026-11-02", TableID: "t1", Calls: 1, USD: 0.25}}
	if err != nil || len(spend) != len(want) {
		t.Fatalf("spend %+v %v", spend, err)
	}
	for i := range want {
		if spend[i] != want[i] {
			t.Errorf("spend[%d] = %+v, want %+v", i, spend[i], want[i])
		}
	}
}

func testConsoleUsers(t *testing.T, s OperatorStore) {
	u := store.ConsoleUser{ID: "u1", Name: "Vic", Role: "viewer", CreatedBy: "admin", CreatedAt: at}
	if err := s.CreateConsoleUser(ctx, u, []byte{1}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreateConsoleUser(ctx, u, []byte{2}), engine.ECONFLICT)
	wantCode(t, s.CreateConsoleUser(ctx, store.ConsoleUser{ID: "u2", Name: "Mo", Role: "moderator", CreatedAt: at}, []byte{1}), engine.ECONFLICT)
	m := store.ConsoleUser{ID: "u2", Name: "Mo", Role: "moderator", CreatedBy: "admin", CreatedAt: at.Add(time.Hour)}
	if err := s.CreateConsoleUser(ctx, m, []byte{2}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ConsoleUserByTokenHash(ctx, []byte{1})
	if err != nil || got.ID != "u1" || got.Role != "viewer" || !got.CreatedAt.Equal(at) || got.RevokedAt != nil {
		t.Fatalf("by token %+v %v", got, err)
	}
	if err := s.RevokeConsoleUser(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeConsoleUser(ctx, "u1"); err != nil {
		t.Fatalf("revoke twice: %v", err)
	}
	wantCode(t, s.RevokeConsoleUser(ctx, "nope"), engine.ENOTFOUND)
	_, err = s.ConsoleUserByTokenHash(ctx, []byte{1})
	wantCode(t, err, engine.ENOTFOUND)
	list, err := s.ConsoleUsers(ctx)
	if err != nil || len(list) != 2 || list[0].ID != "u2" || list[1].RevokedAt == nil || list[0].RevokedAt != nil {
		t.Fatalf("console users, newest first: %+v %v", list, err)
	}
}

func testPlayersBanExportErase(t *testing.T, s OperatorStore) {
	const backstory = "my sister Elira keeps the lighthouse"
	for _, p := range []engine.Player{{ID: "p1", Name: "Quillithorn", CreatedAt: at}, {ID: "p2", Name: "Bo_b", CreatedAt: at.Add(time.Minute)}} {
		if err := s.CreatePlayer(ctx, p, []byte(p.ID)); err != nil {
			t.Fatal(err)
		}
	}
	st := fightingState(t)
	st.Party[0].Backstory = backstory // c1, player p1
	createTable(t, s, "t1", st)       // owned by p1
	start := &engine.PendingAction{ID: "a0", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "start:c1", Text: backstory, CreatedAt: at, Kind: engine.ActionStart}
	act := &engine.PendingAction{ID: "a1", PlayerID: "p1", CharacterID: "c1", Seat: "1", ClientID: "x1", Text: "look around", CreatedAt: at.Add(time.Second)}
	for _, p := range []*engine.PendingAction{start, act} {
		if err := s.Commit(ctx, store.Commit{TableID: "t1", AddPending: p}); err != nil {
			t.Fatal(err)
		}
	}
	say := engine.ChatEvent(engine.Player{ID: "p1", Name: "Quillithorn"}, "zebra xylophone")
	say.Seq, say.TS = 1, at.Add(time.Minute)
	hist := store.AgentMessage{Agent: engine.AgentNarrative, Turn: 1, Body: message("user", "Bram: "+backstory)}
	if err := s.Commit(ctx, store.Commit{TableID: "t1", Events: []engine.Event{say}, Messages: []store.AgentMessage{hist}}); err != nil {
		t.Fatal(err)
	}

	// Search: any case, by id, every player; % and _ are literal.
	if rows, err := s.SearchPlayers(ctx, "QUILL", 10); err != nil || len(rows) != 1 || rows[0].ID != "p1" || rows[0].Tables != 1 {
		t.Fatalf("search by name %+v %v", rows, err)
	}
	if rows, _ := s.SearchPlayers(ctx, "p2", 10); len(rows) != 1 || rows[0].Name != "Bo_b" || rows[0].Tables != 0 {
		t.Fatalf("search by id %+v", rows)
	}
	if rows, _ := s.SearchPlayers(ctx, "", 0); len(rows) != 2 || rows[0].ID != "p2" {
		t.Fatalf("everyone, newest first %+v", rows)
	}
	if rows, _ := s.SearchPlayers(ctx, "o_", 10); len(rows) != 1 || rows[0].ID != "p2" {
		t.Fatalf("_ is literal %+v", rows)
	}
	d, err := s.PlayerDetail(ctx, "p1")
	if err != nil || d.Name != "Quillithorn" || len(d.Seats) != 1 || !d.Seats[0].Owner || d.Actions != 2 || len(d.Recent) != 2 ||
		d.Recent[0].ActionID != "a1" || d.BannedAt != nil || d.Feedback == nil {
		t.Fatalf("detail %+v %v", d, err)
	}
	_, err = s.PlayerDetail(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)

	// Ban: the token signs nobody in until the ban is lifted.
	if err := s.SetPlayerBan(ctx, "p1", true, "spam"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SetPlayerBan(ctx, "nope", true, "x"), engine.ENOTFOUND)
	_, err = s.PlayerByTokenHash(ctx, []byte("p1"))
	wantCode(t, err, engine.ENOTFOUND)
	if d, _ := s.PlayerDetail(ctx, "p1"); !d.Banned || d.BannedAt == nil || d.BanReason != "spam" {
		t.Fatalf("banned detail %+v", d)
	}
	if err := s.SetPlayerBan(ctx, "p1", false, "ignored"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PlayerByTokenHash(ctx, []byte("p1")); err != nil {
		t.Fatalf("token after the ban: %v", err)
	}
	if d, _ := s.PlayerDetail(ctx, "p1"); d.Banned || d.BanReason != "" {
		t.Fatalf("unbanned detail %+v", d)
	}

	x, err := s.ExportPlayer(ctx, "p1")
	if err != nil || x.Player.ID != "p1" || len(x.Characters) != 1 || x.Characters[0].Backstory != backstory ||
		len(x.Chat) != 1 || x.Chat[0].Text != "zebra xylophone" || !x.Chat[0].TS.Equal(at.Add(time.Minute)) || len(x.Actions) != 2 {
		t.Fatalf("export %+v %v", x, err)
	}
	_, err = s.ExportPlayer(ctx, "nope")
	wantCode(t, err, engine.ENOTFOUND)

	// Erasure: the rows stay, the name, chat and backstory go.
	if err := s.ErasePlayer(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.ErasePlayer(ctx, "nope"), engine.ENOTFOUND)
	_, err = s.PlayerByTokenHash(ctx, []byte("p1"))
	wantCode(t, err, engine.ENOTFOUND)
	if rows, _ := s.SearchPlayers(ctx, "p1", 10); len(rows) != 1 || rows[0].Name != store.ErasedName || !rows[0].Erased {
		t.Fatalf("erased row %+v", rows)
	}
	evs, err := s.Events(ctx, "t1", 0, 100)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the erasure %+v %v", evs, err)
	}
	raw, _ := json.Marshal(evs[0].Data)
	var chat map[string]any
	json.Unmarshal(raw, &chat)
	if chat["text"] != "" || chat["name"] != store.ErasedName || chat["player_id"] != "p1" {
		t.Errorf("erased chat %s", raw)
	}
	x, err = s.ExportPlayer(ctx, "p1")
	if err != nil || x.Characters[0].Backstory != "" || x.Actions[1].Text != "" || x.Actions[0].Text != "look around" {
		t.Errorf("export after the erasure %+v %v", x, err)
	}
	h, err := s.AllHistory(ctx, "t1", engine.AgentNarrative)
	if err != nil || len(h) != 1 || strings.Contains(string(h[0].Body), "Elira") || !strings.Contains(string(h[0].Body), "Bram: ") {
		t.Errorf("history after the erasure %+v %v", h, err)
	}
	if st := load(t, s, "t1").State; st.Party[0].Backstory != "" {
		t.Errorf("backstory after the erasure %q", st.Party[0].Backstory)
	}
}
