package hub

import (
	"runtime"
	"sync"
	"sync/atomic"
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
	// An alarm that has not fired when the hub closes never runs.
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

// heldClock is a Config.AfterFunc whose calls wait until the test fires
// them, each on a goroutine of its own as time.AfterFunc's.
type heldClock struct{ calls chan *heldCall }

type heldCall struct {
	f       func()
	stopped atomic.Bool
}

func newHeldClock() *heldClock { return &heldClock{calls: make(chan *heldCall, 16)} }

func (c *heldClock) AfterFunc(_ time.Duration, f func()) Timer {
	hc := &heldCall{f: f}
	c.calls <- hc
	return hc
}

func (hc *heldCall) Stop() bool { return !hc.stopped.Swap(true) }

// fire runs the call as the clock would, even if stopped (a timer that
// fired as it was stopped), and returns once it has.
func (hc *heldCall) fire() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		hc.f()
	}()
	<-done
}

// TestAlarmStop: an alarm stopped before its clock fires never calls its
// function, even if the clock's call comes anyway; a running one calls it
// once, however often the clock calls.
func TestAlarmStop(t *testing.T) {
	clock := newHeldClock()
	h := New(Config{AfterFunc: clock.AfterFunc})
	defer h.Close()
	var stoppedRan, runningRan atomic.Int32
	a := h.after(time.Second, func() { stoppedRan.Add(1) })
	fireA := <-clock.calls
	b := h.after(time.Second, func() { runningRan.Add(1) })
	fireB := <-clock.calls
	a.Stop()
	a.Stop()
	if !fireA.stopped.Load() {
		t.Error("Stop left the clock's timer running")
	}
	fireA.fire()
	fireB.fire()
	fireB.fire()
	if n := stoppedRan.Load(); n != 0 {
		t.Errorf("the stopped alarm ran %d times", n)
	}
	if n := runningRan.Load(); n != 1 {
		t.Errorf("the running alarm ran %d times, want 1", n)
	}
	b.Stop() // after it fired: nothing happens
	var nilAlarm *alarm
	nilAlarm.Stop()
}

// TestAlarmAfterClose: an alarm whose time comes once Close has begun
// does not run, and Close waits for one that started before.
func TestAlarmAfterClose(t *testing.T) {
	clock := newHeldClock()
	h := New(Config{AfterFunc: clock.AfterFunc, ShutdownGrace: time.Millisecond})
	started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h.after(time.Second, func() {
		close(started)
		<-release
		close(returned)
	})
	running := <-clock.calls
	var lateRan atomic.Bool
	h.after(time.Second, func() { lateRan.Store(true) })
	late := <-clock.calls

	go running.fire()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	// Close's grace period: a real timer would have fired by now.
	(<-clock.calls).fire()
	select {
	case <-closed:
		t.Fatal("Close returned while an alarm's call ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Error("Close returned before the running call did")
	}
	late.fire()
	if lateRan.Load() {
		t.Error("an alarm ran after Close")
	}
}

// TestAlarmDuringClose: an alarm due once Close has cancelled the hub's
// context does not run, though Close still waits (for a socket here) and
// goroutines may still be counted.
func TestAlarmDuringClose(t *testing.T) {
	clock := newHeldClock()
	h := New(Config{AfterFunc: clock.AfterFunc})
	if !h.trackSocket() {
		t.Fatal("trackSocket refused on an open hub")
	}
	var ran atomic.Bool
	h.after(time.Second, func() { ran.Store(true) })
	due := <-clock.calls
	closed := make(chan error, 1)
	go func() { closed <- h.Close() }()
	<-h.ctx.Done()
	due.fire()
	h.untrackSocket()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if ran.Load() {
		t.Error("an alarm ran after Close cancelled the hub")
	}
}

// TestAlarmStopRace stops alarms of the real clock as they fire (under
// -race: the alarm's state is shared by Stop and the clock's goroutine):
// each runs at most once, and none is still running once Close returns.
func TestAlarmStopRace(t *testing.T) {
	clock := &countedClock{}
	h := New(Config{AfterFunc: clock.AfterFunc})
	const n = 2000
	var runs [n]atomic.Int32
	var running atomic.Int32
	for i := range n {
		a := h.after(time.Duration(i%3)*time.Microsecond, func() {
			running.Add(1)
			runs[i].Add(1)
			runtime.Gosched()
			running.Add(-1)
		})
		if i%2 == 0 {
			a.Stop()
		}
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if r := running.Load(); r != 0 {
		t.Errorf("%d alarms still running after Close", r)
	}
	total := func() (sum int32) {
		for i := range n {
			r := runs[i].Load()
			if r > 1 {
				t.Errorf("alarm %d ran %d times", i, r)
			}
			sum += r
		}
		return sum
	}
	atClose := total()
	clock.calls.Wait() // the clock's calls still to come once Close returned
	if after := total(); after != atClose {
		t.Errorf("%d alarms ran after Close", after-atClose)
	}
}

// countedClock is the real clock, counting its calls to come (calls) so
// that a test can wait until none is left.
type countedClock struct{ calls sync.WaitGroup }

func (c *countedClock) AfterFunc(d time.Duration, f func()) Timer {
	c.calls.Add(1)
	return countedTimer{time.AfterFunc(d, func() {
		defer c.calls.Done()
		f()
	}), c}
}

type countedTimer struct {
	*time.Timer
	clock *countedClock
}

func (t countedTimer) Stop() bool {
	stopped := t.Timer.Stop()
	if stopped {
		t.clock.calls.Done()
	}
	return stopped
}

// TestAlarmsStartNoGoroutine: waiting alarms of the real clock are timers,
// not goroutines (a goroutine each was churn under load).
func TestAlarmsStartNoGoroutine(t *testing.T) {
	h := New(Config{})
	defer h.Close()
	before := runtime.NumGoroutine()
	const n = 1000
	alarms := make([]*alarm, 0, n)
	for range n {
		alarms = append(alarms, h.after(time.Hour, func() { t.Error("an hour passed") }))
	}
	if grew := runtime.NumGoroutine() - before; grew >= n/10 {
		t.Errorf("%d waiting alarms started %d goroutines", n, grew)
	}
	for _, a := range alarms {
		a.Stop()
	}
}

// BenchmarkAlarm arms a turn timer and stops it, as a table does at every
// change of a tactical fight's turn (armTimer).
func BenchmarkAlarm(b *testing.B) {
	h := New(Config{})
	defer h.Close()
	b.ReportAllocs()
	for b.Loop() {
		h.after(time.Minute, func() {}).Stop()
	}
}
