package hub_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"tavern/internal/agent"
	"tavern/internal/engine"
	"tavern/internal/hub"
	"tavern/internal/tavern"
)

// downModel fails every turn, like a DM whose API is down.
type downModel struct{}

func (downModel) Name() string { return "down" }

func (downModel) Complete(context.Context, agent.Request) (agent.Response, error) {
	return agent.Response{}, errors.New("model down")
}

// hubGoroutines returns the stacks of the live goroutines labelled
// test=label that run code of package hub. Goroutines inherit the labels
// of the goroutine that starts them, so these are the ones this test's hub
// started, directly or not (its store's are not in package hub).
func hubGoroutines(t *testing.T, label string) []string {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		t.Fatal(err)
	}
	// debug=1: records separated by blank lines, "N @ pcs", then
	// "# labels: {...}" and one "#\t<pc> <func> <file:line>" per frame.
	var out []string
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var rec []string
	flush := func() {
		if len(rec) == 0 {
			return
		}
		text := strings.Join(rec, "\n")
		if strings.Contains(text, `"test":"`+label+`"`) && strings.Contains(text, "tavern/internal/hub.") {
			n, _ := strconv.Atoi(strings.Fields(rec[0])[0])
			for range n {
				out = append(out, text)
			}
		}
		rec = rec[:0]
	}
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			flush()
			continue
		}
		rec = append(rec, sc.Text())
	}
	flush()
	return out
}

// TestCloseLeavesNoGoroutine: the table loop and a subscriber's watcher
// are the hub's goroutines, and none of them outlives Close, even with a
// backoff after a failed turn on a clock that never fires and a subscriber
// that never leaves.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	ctx := context.Background()
	// The clock never fires; it counts the backoffs scheduled on it.
	var scheduled atomic.Int32
	never := func(time.Duration, func()) hub.Timer {
		scheduled.Add(1)
		return neverTimer{}
	}

	const label = "close-leaves-no-goroutine"
	var h *hub.Hub
	var tv *tavern.Tavern
	pprof.Do(ctx, pprof.Labels("test", label), func(ctx context.Context) {
		tv = openTavern(t, filepath.Join(t.TempDir(), "tavern.db"), &agent.Runner{Narrative: downModel{}, Combat: downModel{}},
			func(c *hub.Config) { c.Seed, c.AfterFunc = func() uint64 { return 7 }, never })
		h = tv.Hub
		owner := engine.Player{ID: "p-owner", Name: "Owner"}
		ts, err := h.CreateTable(ctx, owner, hub.TableSpec{Name: "Leaks"})
		if err != nil {
			t.Fatal(err)
		}
		// A subscriber that never cancels its context (its forwarder is
		// (*Hub).subscribe.func…, shared by Subscribe and Stream).
		evs, err := h.Subscribe(context.Background(), ts.ID, -1)
		if err != nil {
			t.Fatal(err)
		}
		// A backstory queues a session-start turn, which the down model
		// fails: the table backs off on the clock, which never fires.
		ann := engine.Player{ID: "p-ann", Name: "Ann"}
		if _, err := h.Sit(ctx, ts.ID, ann, engine.NewCharacterSpec{Name: "Aldric", Backstory: "A miller's son."}); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(10 * time.Second)
	wait:
		for {
			select {
			case e := <-evs:
				if d, ok := e.Data.(engine.SystemData); ok && d.Code == hub.CodeUnavailable {
					break wait
				}
			case <-timeout:
				t.Fatal("the failed turn was never reported")
			}
		}
		// The backoff is scheduled in the same table command that reported
		// the failure: one more command runs after it.
		if _, err := h.Snapshot(ctx, ts.ID); err != nil {
			t.Fatal(err)
		}
	})

	before := strings.Join(hubGoroutines(t, label), "\n\n")
	for _, want := range []string{"(*table).loop", "(*Hub).subscribe.func"} {
		if !strings.Contains(before, want) {
			t.Errorf("before Close, no goroutine in %s; the hub's goroutines:\n%s", want, before)
		}
	}
	// The backoff is a timer of the clock, no goroutine until it fires
	// (spawn_test.go: an alarm that fires once Close began never runs).
	if scheduled.Load() == 0 {
		t.Error("before Close, no backoff scheduled on the clock")
	}

	if err := tv.Close(); err != nil {
		t.Fatal(err)
	}
	// A goroutine that Close waited for may still be returning from its
	// last call; one that Close did not wait for is blocked for good here
	// (the clock never fires, the subscriber never leaves).
	// A guard against a goroutine that never ends, not a measure of how
	// fast they end: a loaded machine may take seconds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := hubGoroutines(t, label)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the hub outlived Close:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// neverTimer is a call of a clock that never fires.
type neverTimer struct{}

func (neverTimer) Stop() bool { return true }
