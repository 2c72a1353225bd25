package hub

import (
	"encoding/json"
	"testing"
)

// deltaTable is a table with an inbox nobody runs and one client, so the
// test decides when the table goroutine's work happens.
func deltaTable(inbox int) (*table, *client) {
	c := &client{out: make(chan []byte, 16), done: make(chan struct{})}
	t := &table{inbox: make(chan func(), inbox), clients: map[*client]struct{}{c: {}}}
	return t, c
}

// runInbox runs what is queued on the table's inbox.
func runInbox(t *table) {
	for {
		select {
		case f := <-t.inbox:
			f()
		default:
			return
		}
	}
}

func deltaTexts(t *testing.T, c *client) []string {
	t.Helper()
	var out []string
	for {
		select {
		case b := <-c.out:
			var f struct{ Type, Turn, Text string }
			if err := json.Unmarshal(b, &f); err != nil || f.Type != "narration_delta" || f.Turn != "t7" {
				t.Fatalf("frame %s (%v)", b, err)
			}
			out = append(out, f.Text)
		default:
			return out
		}
	}
}

func TestDeltaStreamGathersWhatArrivesBetweenFlushes(t *testing.T) {
	tb, c := deltaTable(8)
	d := &deltaStream{t: tb, turnID: "t7"}
	for _, s := range []string{"The ", "door ", "creaks ", "open."} {
		d.add(s)
	}
	if n := len(tb.inbox); n != 1 {
		t.Fatalf("%d flushes queued for four deltas, want 1", n)
	}
	runInbox(tb)
	if got := deltaTexts(t, c); len(got) != 1 || got[0] != "The door creaks open." {
		t.Fatalf("frames %q, want one with the whole text", got)
	}
	d.add(" A draught.")
	runInbox(tb)
	if got := deltaTexts(t, c); len(got) != 1 || got[0] != " A draught." {
		t.Fatalf("after the flush: frames %q", got)
	}
}

func TestDeltaStreamKeepsTextWhenTheInboxIsFull(t *testing.T) {
	tb, c := deltaTable(1)
	tb.inbox <- func() {} // the table is busy: its inbox is full
	d := &deltaStream{t: tb, turnID: "t7"}
	d.add("Lost ")
	runInbox(tb)
	if got := deltaTexts(t, c); len(got) != 0 {
		t.Fatalf("frames %q before any flush", got)
	}
	d.add("and found.")
	runInbox(tb)
	if got := deltaTexts(t, c); len(got) != 1 || got[0] != "Lost and found." {
		t.Fatalf("frames %q, want the kept text with the next", got)
	}
}
