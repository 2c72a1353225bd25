package hub

import (
	"testing"
	"time"
)

// TestWaitIdleSignal: waitIdle is woken by the end of the turn job, not by
// polling, and gives up when its deadline channel fires.
func TestWaitIdleSignal(t *testing.T) {
	h := New(Config{})
	tb := &table{h: h}
	if !tb.waitIdle(nil) {
		t.Fatal("an idle table is not idle")
	}

	if !tb.markBusy() {
		t.Fatal("markBusy refused on an open hub")
	}
	done := make(chan bool, 1)
	go func() { done <- tb.waitIdle(nil) }()
	select {
	case <-done:
		t.Fatal("waitIdle returned while the job runs")
	case <-time.After(50 * time.Millisecond):
	}
	tb.markIdle()
	select {
	case idle := <-done:
		if !idle {
			t.Error("waitIdle reported busy after the job ended")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waitIdle was not woken when the job ended")
	}

	if !tb.markBusy() {
		t.Fatal("markBusy refused on an open hub")
	}
	expired := make(chan time.Time, 1)
	expired <- time.Time{}
	if tb.waitIdle(expired) {
		t.Error("waitIdle reported idle past its deadline while the job runs")
	}
	tb.markIdle()

	// Once the hub closes, no job may start behind Close's back.
	h.closed.Store(true)
	if tb.markBusy() {
		t.Error("markBusy accepted a job on a closing hub")
	}
	if !tb.waitIdle(nil) {
		t.Error("a refused job left the table busy")
	}
}

// TestSpawnAfterClose: once Close has waited for the hub's goroutines,
// nothing new starts, so nothing can outlive it; Close is safe twice.
func TestSpawnAfterClose(t *testing.T) {
	h := New(Config{})
	ran := make(chan struct{})
	if !h.spawn(func() { close(ran) }) {
		t.Fatal("spawn refused on an open hub")
	}
	<-ran
	// An alarm that never fires still ends with the hub.
	h.after(time.Hour, func() { t.Error("the alarm fired") })
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if h.spawn(func() { t.Error("a goroutine started after Close") }) {
		t.Error("spawn accepted after Close")
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestAlarmStop: an alarm stopped before its clock fires never calls its
// function; a running one does, once.
func TestAlarmStop(t *testing.T) {
	clock := make(chan chan time.Time, 2)
	h := New(Config{After: func(time.Duration) <-chan time.Time {
		c := make(chan time.Time, 1)
		clock <- c
		return c
	}})
	defer h.Close()
	called := make(chan string, 2)
	a := h.after(time.Second, func() { called <- "stopped" })
	fireA := <-clock
	b := h.after(time.Second, func() { called <- "running" })
	fireB := <-clock
	a.Stop()
	a.Stop()
	fireA <- time.Time{}
	fireB <- time.Time{}
	select {
	case got := <-called:
		if got != "running" {
			t.Fatalf("the %s alarm fired", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the running alarm did not fire")
	}
	b.Stop() // after it fired: nothing happens
	// Close waits for both alarms' goroutines: nothing can be sent after.
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-called:
		t.Errorf("the %s alarm fired too", got)
	default:
	}
}
