package hub

import (
	"encoding/json"
	"testing"
)

// deltaTable stands for the table: an inbox of room places that the test
// runs when it decides, and the frames sent to its clients.
type deltaTable struct {
	room   int
	inbox  []func()
	frames [][]byte
}

func (dt *deltaTable) stream() *deltaStream {
	return &deltaStream{turnID: "t7",
		post: func(f func()) bool {
			if len(dt.inbox) == dt.room {
				return false
			}
			dt.inbox = append(dt.inbox, f)
			return true
		},
		fanout: func(frame []byte) { dt.frames = append(dt.frames, frame) }}
}

// run runs what is queued on the inbox.
func (dt *deltaTable) run() {
	for len(dt.inbox) > 0 {
		f := dt.inbox[0]
		dt.inbox = dt.inbox[1:]
		f()
	}
}

// texts returns the texts of the frames sent since the last call.
func (dt *deltaTable) texts(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, b := range dt.frames {
		var f struct{ Type, Turn, Text string }
		if err := json.Unmarshal(b, &f); err != nil || f.Type != "narration_delta" || f.Turn != "t7" {
			t.Fatalf("frame %s (%v)", b, err)
		}
		out = append(out, f.Text)
	}
	dt.frames = nil
	return out
}

func TestDeltaStreamGathersWhatArrivesBetweenFlushes(t *testing.T) {
	dt := &deltaTable{room: 8}
	d := dt.stream()
	for _, s := range []string{"The ", "door ", "creaks ", "open."} {
		d.add(s)
	}
	if n := len(dt.inbox); n != 1 {
		t.Fatalf("%d flushes queued for four deltas, want 1", n)
	}
	dt.run()
	if got := dt.texts(t); len(got) != 1 || got[0] != "The door creaks open." {
		t.Fatalf("frames %q, want one with the whole text", got)
	}
	d.add(" A draught.")
	dt.run()
	if got := dt.texts(t); len(got) != 1 || got[0] != " A draught." {
		t.Fatalf("after the flush: frames %q", got)
	}
}

func TestDeltaStreamKeepsTextWhenTheInboxIsFull(t *testing.T) {
	dt := &deltaTable{room: 1}
	dt.inbox = append(dt.inbox, func() {}) // the table is busy: its inbox is full
	d := dt.stream()
	d.add("Lost ")
	dt.run()
	if got := dt.texts(t); len(got) != 0 {
		t.Fatalf("frames %q before any flush", got)
	}
	d.add("and found.")
	dt.run()
	if got := dt.texts(t); len(got) != 1 || got[0] != "Lost and found." {
		t.Fatalf("frames %q, want the kept text with the next", got)
	}
}

func TestNarrationDeltaFrameIsMarshal(t *testing.T) {
	for _, text := range []string{"", "The door creaks open.", `He says "<no> & no" \ twice.` + "\n\t", "bad \xff utf-8 and \u2028"} {
		want := mustFrame(map[string]any{"type": "narration_delta", "turn": "t7", "text": text})
		if got := narrationDeltaFrame("t7", text); string(got) != string(want) {
			t.Errorf("narrationDeltaFrame = %s, want %s", got, want)
		}
	}
}
