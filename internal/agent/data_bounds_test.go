package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tavern/internal/dataset"
	"tavern/internal/dataset/datasettest"
)

// TestDataAgentBoundsABigCell queries a table whose name is 16 MiB: the
// step, the tool result the model reads and the stored conversation are
// each within their bounds and carry the cut's marker.
func TestDataAgentBoundsABigCell(t *testing.T) {
	e := newDataEnv(t, nil)
	datasettest.MustSetBigName(t, e.path, 16<<20)
	e.data.Timeout = time.Minute // reading 16 MiB under -race on a busy machine; no time is asserted
	e.fake.Push(
		reply("query_data", map[string]any{"sql": "SELECT table_id, name FROM v_tables ORDER BY table_id", "description": "Table names"}),
		reply("answer", map[string]any{"text": "Three tables; the first has a very long name."}),
	)
	ctx := context.Background()
	got, err := e.agent.Ask(ctx, "", "What are the tables called?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Steps) != 1 {
		t.Fatalf("steps %+v; want one query", got.Steps)
	}
	s := got.Steps[0]
	if !s.Truncated || len(s.Cut) != 1 || s.Cut[0].Bytes != 16<<20 || s.Cut[0].Marker != "…[cut: 16,777,216 bytes, showing 65,535]" {
		t.Errorf("step truncated %v, cut %+v; want the name's cut", s.Truncated, s.Cut)
	}
	if b, _ := json.Marshal(got); len(b) > dataset.MaxResultBytes {
		t.Errorf("reply is %d bytes; want at most %d", len(b), dataset.MaxResultBytes)
	}

	const toolBound = 64<<10 + 100 // the text's bound and its prefix
	reqs := e.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls; want 2", len(reqs))
	}
	tool := lastTool(reqs[1].Messages)
	if len(tool) > toolBound || !strings.Contains(tool, "…[cut: 16,777,216 bytes, showing 4,096]") {
		t.Errorf("tool result for the model is %d bytes, marker %v; want at most %d, marked", len(tool), strings.Contains(tool, "[cut:"), toolBound)
	}

	stored, err := e.store.Conversation(ctx, got.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var marked bool
	for _, m := range stored {
		n += len(m.Body)
		marked = marked || strings.Contains(string(m.Body), "[cut: 16,777,216 bytes, showing 4,096]")
	}
	if n > 2*toolBound || !marked {
		t.Errorf("stored conversation is %d bytes, marked %v; want at most %d, marked", n, marked, 2*toolBound)
	}
}
