package hub

import (
	"context"
	"runtime"
	"testing"
	"time"

	"tavern/internal/engine"
)

// TestChangesRefusedOnceClosed: a change an owner or a player asked for
// before the operator closed the table, and that runs after, is refused
// with ECONFLICT and writes nothing: the check is made on the table
// goroutine, where the close happens, not before the call.
func TestChangesRefusedOnceClosed(t *testing.T) {
	ctx := context.Background()
	owner, bob := engine.Player{ID: "p-owner", Name: "Olga"}, engine.Player{ID: "p-bob", Name: "Bob"}
	cases := []struct {
		name string
		call func(h *Hub, id string) error
	}{
		{"add a note", func(h *Hub, id string) error {
			_, err := h.AddNote(ctx, id, bob, "The mill burns.")
			return err
		}},
		{"score a narration", func(h *Hub, id string) error { return h.Feedback(ctx, id, bob, 1, 1, "") }},
		{"correct a narration", func(h *Hub, id string) error {
			_, err := h.EditNarration(ctx, id, owner, 1, "A grey dawn.")
			return err
		}},
		{"sit", func(h *Hub, id string) error {
			_, err := h.Sit(ctx, id, engine.Player{ID: "p-cy", Name: "Cy"}, engine.NewCharacterSpec{Name: "Cyra", Class: "mage"})
			return err
		}},
		{"leave", func(h *Hub, id string) error { return h.Leave(ctx, id, bob) }},
		{"invite", func(h *Hub, id string) error {
			_, err := h.Invite(ctx, id, owner)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, st := testHub(t, nil)
			sum, err := h.CreateTable(ctx, owner, TableSpec{Name: "Closing"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Sit(ctx, sum.ID, bob, engine.NewCharacterSpec{Name: "Brom", Class: "warrior"}); err != nil {
				t.Fatal(err)
			}
			settle(t, h, sum.ID) // Brom's arrival is narrated
			before, err := st.Events(ctx, sum.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			err = behindClose(t, h, sum.ID, func() error { return tc.call(h, sum.ID) })
			if engine.ErrorCode(err) != engine.ECONFLICT {
				t.Errorf("%s on a table closed meanwhile = %v, want ECONFLICT", tc.name, err)
			}
			after, err := st.Events(ctx, sum.ID, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			// The close's audit line is the only event since.
			if len(after) != len(before)+1 {
				t.Errorf("%d events written since, want the close's only: %+v", len(after)-len(before), after[len(before):])
			}
		})
	}
}

// settle waits until table id runs no turn and has no action waiting.
func settle(t *testing.T, h *Hub, id string) {
	t.Helper()
	for range 2000 {
		s, err := h.Snapshot(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Busy && len(s.Pending) == 0 {
			return
		}
		time.Sleep(5 * time.Millisecond) // a bound on the wait, not an assertion
	}
	t.Fatal("the table never settled")
}

// behindClose runs call, which queues a command on table id's players
// queue, so that the operator's close of the table runs first.
func behindClose(t *testing.T, h *Hub, id string, call func() error) error {
	t.Helper()
	tb, err := h.table(id)
	if err != nil {
		t.Fatal(err)
	}
	hold, held := make(chan struct{}), make(chan struct{})
	tb.postSystem(func() { close(held); <-hold })
	<-held
	res := make(chan error, 1)
	go func() { res <- call() }()
	for len(tb.players) == 0 {
		runtime.Gosched() // until call's command is queued
	}
	closed := make(chan error, 1)
	go func() { closed <- h.CloseTable(context.Background(), id) }()
	for len(tb.system) == 0 {
		runtime.Gosched() // the system queue goes first
	}
	close(hold)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	return <-res
}
