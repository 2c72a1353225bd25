package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"tavern/internal/store"
)

func TestHealth(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	e429 := errors.New(`POST "http://127.0.0.1/v1/chat/completions": 429 Too Many Requests`)
	e500 := errors.New(`POST "http://127.0.0.1/v1/chat/completions": 500 Internal Server Error`)
	var h Health
	h.Watch("idle")
	h.Record("m", t0, nil)
	h.Record("m", t0.Add(time.Minute), e429)
	h.Record("m", t0.Add(2*time.Minute), nil)
	h.Record("m", t0.Add(3*time.Minute), e500)
	// An error recorded late (a slow call) does not hide the newer one.
	h.Record("m", t0.Add(150*time.Second), e429)

	cases := []struct {
		name            string
		at              time.Time
		state, kind     string
		calls, errs     int
		rate            float64
		lastOK, lastErr time.Time
	}{
		{"within five minutes", t0.Add(4 * time.Minute), ModelFailing, store.CallServer, 5, 3, 0.6, t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)},
		{"the first calls aged out", t0.Add(5*time.Minute + 30*time.Second), ModelFailing, store.CallServer, 4, 3, 0.75, t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)},
		{"all aged out", t0.Add(9 * time.Minute), ModelFailing, store.CallServer, 0, 0, 0, t0.Add(2 * time.Minute), t0.Add(3 * time.Minute)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ms := h.Models(c.at)
			if len(ms) != 2 || ms[0].Model != "idle" || ms[1].Model != "m" {
				t.Fatalf("models %+v, want idle and m", ms)
			}
			idle, m := ms[0], ms[1]
			if idle.State != ModelUnknown || idle.Calls5m != 0 || idle.LastSuccessAt != nil || idle.LastErrorAt != nil {
				t.Errorf("idle %+v, want unknown without calls", idle)
			}
			if m.State != c.state || m.LastErrorKind != c.kind || m.Calls5m != c.calls || m.Errors5m != c.errs || m.ErrorRate5m != c.rate {
				t.Errorf("m %+v, want %s, %s, %d calls, %d errors, rate %v", m, c.state, c.kind, c.calls, c.errs, c.rate)
			}
			if m.LastSuccessAt == nil || !m.LastSuccessAt.Equal(c.lastOK) || m.LastErrorAt == nil || !m.LastErrorAt.Equal(c.lastErr) {
				t.Errorf("m last success %v, last error %v; want %v, %v", m.LastSuccessAt, m.LastErrorAt, c.lastOK, c.lastErr)
			}
			if m.LastError != e500.Error() {
				t.Errorf("last error %q", m.LastError)
			}
		})
	}
	h.Record("m", t0.Add(10*time.Minute), nil)
	if m := h.Models(t0.Add(10 * time.Minute))[1]; m.State != ModelOK || m.Calls5m != 1 || m.ErrorRate5m != 0 || m.LastErrorKind != store.CallServer {
		t.Errorf("after a success: %+v, want ok, 1 call, no errors, the last error kept", m)
	}
}

// TestHealthZeroClock: a clock at the zero time counts like any other.
func TestHealthZeroClock(t *testing.T) {
	var h Health
	h.Record("m", time.Time{}, nil)
	if m := h.Models(time.Time{})[0]; m.Calls5m != 1 {
		t.Errorf("%+v, want one call", m)
	}
}

// failModel fails every call with err.
type failModel struct{ err error }

func (failModel) Name() string { return "flaky" }
func (m failModel) Complete(context.Context, Request) (Response, error) {
	return Response{}, m.err
}

// TestLoggedFeedsHealth: Logged counts each finished call, but not one
// its caller cancelled.
func TestLoggedFeedsHealth(t *testing.T) {
	var h Health
	at := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return at }
	ok := &Logged{Model: answerModel{}, Log: discardLog{}, Health: &h, Now: clock}
	bad := &Logged{Model: failModel{errors.New("POST: 503 Service Unavailable")}, Log: discardLog{}, Health: &h, Now: clock}
	if _, err := ok.Complete(context.Background(), Request{}); err != nil {
		t.Fatal(err)
	}
	bad.Complete(context.Background(), Request{})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	gone := &Logged{Model: failModel{context.Canceled}, Log: discardLog{}, Health: &h, Now: clock}
	gone.Complete(cancelled, Request{})

	ms := h.Models(at)
	if len(ms) != 2 {
		t.Fatalf("models %+v", ms)
	}
	flaky, mini := ms[0], ms[1]
	if mini.Model != "gpt-4o-mini" || mini.State != ModelOK || mini.Calls5m != 1 {
		t.Errorf("answering model %+v", mini)
	}
	if flaky.Model != "flaky" || flaky.State != ModelFailing || flaky.LastErrorKind != store.CallServer || flaky.Calls5m != 1 || flaky.ErrorRate5m != 1 {
		t.Errorf("failing model %+v: want one server error, the cancelled call not counted", flaky)
	}
}
