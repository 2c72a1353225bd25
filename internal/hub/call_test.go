package hub

import (
	"context"
	"errors"
	"testing"

	"tavern/internal/engine"
)

// A command refused by call never runs later: "an error means nothing
// changed". The table loop is not started, so the test
// decides when the queued command gets its turn.
func TestCallRefusedCommandNeverRuns(t *testing.T) {
	cases := []struct {
		name     string
		giveUp   func(cancel context.CancelFunc, h *Hub)
		wantCode string
	}{
		{"caller gives up", func(cancel context.CancelFunc, _ *Hub) { cancel() }, ""},
		{"hub shuts down", func(_ context.CancelFunc, h *Hub) { h.cancel() }, engine.EUNAVAILABLE},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := New(Config{})
			tb := &table{h: h, players: make(chan func(), 1)}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ran := false
			errc := make(chan error, 1)
			go func() { errc <- tb.call(ctx, func() error { ran = true; return nil }) }()
			cmd := <-tb.players // queued, not yet run
			tc.giveUp(cancel, h)
			err := <-errc
			if err == nil {
				t.Fatal("call answered success for a command that never ran")
			}
			if tc.wantCode != "" && engine.ErrorCode(err) != tc.wantCode {
				t.Errorf("code %q, want %q", engine.ErrorCode(err), tc.wantCode)
			}
			if tc.wantCode == "" && !errors.Is(err, context.Canceled) {
				t.Errorf("err %v, want context.Canceled", err)
			}
			cmd() // the loop reaches the command after the refusal
			if ran {
				t.Error("a refused command ran later")
			}
		})
	}
}

// Once the command has started, its answer is the answer, even if the
// caller gives up meanwhile.
func TestCallStartedCommandAnswers(t *testing.T) {
	h := New(Config{})
	tb := &table{h: h, players: make(chan func(), 1)}
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- tb.call(ctx, func() error { close(started); <-release; return nil })
	}()
	cmd := <-tb.players
	go cmd()
	<-started
	cancel()
	h.cancel()
	close(release)
	if err := <-errc; err != nil {
		t.Errorf("call = %v for a command that ran and succeeded", err)
	}
}
